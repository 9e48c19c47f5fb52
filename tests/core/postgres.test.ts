/**
 * The REST, WebSocket and command tests again, on PostgreSQL (HONEYBEE_TEST_DB=postgres, see
 * tests/helpers/postgres.ts), so that every `npm test` covers the second backend. They run in
 * a child `bun test`: the switch is per process, and the other files of this run stay on SQLite.
 * `npm run test:pg` runs all of tests/core on PostgreSQL.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { BUN, ROOT } from "../helpers";
import { PG_ADMIN_URL, PG_START_HINT } from "../helpers/postgres";

const FILES = ["tests/core/api.test.ts", "tests/core/events-api.test.ts", "tests/core/commands.test.ts"];

test("the API, events and commands tests pass on PostgreSQL", async () => {
  const probe = new SQL(PG_ADMIN_URL, { max: 1, connectionTimeout: 5 });
  try {
    await probe`select 1`;
  } catch (e) {
    throw new Error(`PostgreSQL does not answer at ${PG_ADMIN_URL} (${(e as Error).message}); ${PG_START_HINT}`);
  } finally {
    await probe.close().catch(() => {});
  }
  const proc = Bun.spawn([BUN, "test", "--timeout", "120000", ...FILES], { cwd: ROOT, env: { ...process.env, HONEYBEE_TEST_DB: "postgres" }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const report = out + err;
  // The whole report on failure: which test, and why.
  if (code !== 0) console.error(report);
  expect({ code, failed: /^\s*(\d+) fail$/m.exec(report)?.[1], ran: /Ran (\d+) tests across 3 files/.exec(report) !== null }).toEqual({ code: 0, failed: "0", ran: true });
});
