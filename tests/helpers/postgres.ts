/**
 * Throwaway PostgreSQL databases on the machine's server (PG_ADMIN_URL, default
 * postgres://postgres@127.0.0.1:5432/postgres), for the tests' switch and `bun run bench pg`.
 *
 * HONEYBEE_TEST_DB=postgres (`npm run test:pg`) makes startTestCore run every Core on a fresh
 * database of its own instead of `:memory:`, dropped when the Core stops. The first one of a
 * test process is migrated and kept as the template of the others (a copy is several times
 * quicker than migrating), and dropped after the last test (tests/setup.ts); templates of test processes
 * that died are dropped by the next one.
 */
import { SQL } from "bun";
import { openPgDatabase } from "../../src/db/pg";

export const PG_ADMIN_URL = process.env.PG_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** `postgres`: every test Core on PostgreSQL; `cluster`: on PostgreSQL and the machine's NATS, alone in a cluster of its own name. */
export const onPostgres = (): boolean => process.env.HONEYBEE_TEST_DB === "postgres" || process.env.HONEYBEE_TEST_DB === "cluster";
export const onCluster = (): boolean => process.env.HONEYBEE_TEST_DB === "cluster";

export const PG_START_HINT = "start it with: pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start";

let admin: SQL | null = null;
let made = 0;

async function adminClient(): Promise<SQL> {
  if (admin) return admin;
  const client = new SQL(PG_ADMIN_URL, { max: 1, idleTimeout: 0 });
  try {
    await client`select 1`;
  } catch (e) {
    await client.close().catch(() => {});
    throw new Error(`PostgreSQL does not answer at ${PG_ADMIN_URL} (${(e as Error).message}); ${PG_START_HINT}`);
  }
  return (admin = client);
}

function urlOf(name: string, server = PG_ADMIN_URL): string {
  const url = new URL(server);
  url.pathname = `/${name}`;
  return url.toString();
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Creates an empty database with a unique name; `drop()` removes it (closing whatever still uses it). */
export async function scratchDatabase(prefix = "honeybee", template?: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const sql = await adminClient();
  const name = `${prefix}_${process.pid}_${++made}_${Date.now().toString(36)}`;
  await sql.unsafe(`create database "${name}"${template ? ` template "${template}"` : ""}`);
  return { url: urlOf(name), name, drop: () => sql.unsafe(`drop database if exists "${name}" with (force)`).then(() => {}) };
}

/**
 * The same on any server (a private one of tests/helpers/private-pg.ts): a connection of its
 * own to `server`, closed by `drop()`.
 */
export async function scratchDatabaseOn(server: string, prefix = "honeybee"): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const sql = new SQL(server, { max: 1, idleTimeout: 0 });
  const name = `${prefix}_${process.pid}_${++made}_${Date.now().toString(36)}`;
  try {
    await sql.unsafe(`create database "${name}"`);
  } catch (e) {
    await sql.close().catch(() => {});
    throw new Error(`cannot create a database on ${server}: ${(e as Error).message}`);
  }
  return {
    url: urlOf(name, server),
    name,
    drop: async () => {
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.close().catch(() => {});
      }
    },
  };
}

let template: Promise<string> | null = null;

/** This process's migrated template database (see the file header). */
function testTemplate(): Promise<string> {
  return (template ??= (async () => {
    const sql = await adminClient();
    for (const r of await sql`select datname from pg_database where datname like 'honeybee_tmpl_%'`) {
      const pid = Number(/^honeybee_tmpl_(\d+)$/.exec(r.datname)?.[1]);
      if (pid && pid !== process.pid && !alive(pid)) await sql.unsafe(`drop database if exists "${r.datname}" with (force)`);
    }
    const name = `honeybee_tmpl_${process.pid}`;
    await sql.unsafe(`drop database if exists "${name}" with (force)`);
    await sql.unsafe(`create database "${name}"`);
    await (await openPgDatabase(urlOf(name), 1)).$client.close();
    return name;
  })());
}

/** Drops this process's template (tests/setup.ts, after the last test) and closes the admin connection. */
export async function closeTestDatabases(): Promise<void> {
  const t = template;
  template = null;
  if (t && admin) await admin.unsafe(`drop database if exists "${await t.catch(() => "")}" with (force)`).catch(() => {});
  await admin?.close();
  admin = null;
}

/** A fresh, migrated database for one Core of a test. */
export async function testDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return scratchDatabase("honeybee_test", await testTemplate());
}
