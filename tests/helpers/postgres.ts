/**
 * A throwaway PostgreSQL database on the machine's server (PG_ADMIN_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), for the tests' switch and `bun run bench pg`.
 *
 * HONEYBEE_TEST_DB=postgres (`npm run test:pg`) makes startTestCore run every Core on a fresh
 * database of its own instead of `:memory:`, dropped when the Core stops.
 */
import { SQL } from "bun";

export const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export const onPostgres = (): boolean => process.env.HONEYBEE_TEST_DB === "postgres";

export const PG_START_HINT = "start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

let made = 0;

/** Creates a database with a unique name; `drop()` removes it (closing whatever still uses it). */
export async function scratchDatabase(prefix = "honeybee"): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const admin = new SQL(PG_ADMIN_URL, { max: 1 });
  try {
    await admin`select 1`;
  } catch (e) {
    await admin.close().catch(() => {});
    throw new Error(`PostgreSQL does not answer at ${PG_ADMIN_URL} (${(e as Error).message}); ${PG_START_HINT}`);
  }
  const name = `${prefix}_${process.pid}_${++made}_${Date.now().toString(36)}`;
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      try {
        await admin.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await admin.close();
      }
    },
  };
}
