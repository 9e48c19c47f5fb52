/**
 * Sessions in a cluster: one attacker session whose events reach two instances, each with
 * its own ingest pipeline and writer, is one row that counts every event once.
 */
import { expect, test } from "bun:test";
import { startWriterRole } from "../../src/cluster/writer-role";
import { SEG_SIZE } from "../../src/db/event-store";
import { PgSessionQueries } from "../../src/db/pg/session-queries";
import { silentLogger } from "../../src/log";
import { ingestPipeline, NOW, until, withCluster } from "./helpers";

const source = { transport: "events" as const, remote: "test" };
const SESSION = "c0ffee15dead";
let tick = 0;
const ev = (eventid: string, extra: Record<string, unknown> = {}) => ({
  eventid,
  session: SESSION,
  src_ip: "203.0.113.44",
  pot_id: "cowrie-01",
  pot_type: "cowrie",
  timestamp: new Date(NOW - 600_000 + tick++).toISOString(),
  ...extra,
});

test("a session whose events come through two instances and two writers is one row that counts each event once", () =>
  withCluster(async ({ bus, pg, connect }) => {
    const a = ingestPipeline(bus);
    const b = ingestPipeline(await connect());
    const writer = () => startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
    const stored = async () => Number((await pg.sql`select count(*)::int as n from events`)[0].n);

    // Instance A's writer alone: the session begins, noise fills its first segment, a login in the next.
    const first = await writer();
    a.submit(ev("cowrie.session.connect"), source);
    for (let i = 0; i < SEG_SIZE + 100; i++) a.submit({ eventid: "cowrie.session.connect", session: `n${i}`, src_ip: "198.51.100.1", pot_id: "cowrie-01", pot_type: "cowrie" }, source);
    a.submit(ev("cowrie.login.success", { username: "root", password: "first" }), source);
    await a.flush();
    await until(async () => (await stored()) === SEG_SIZE + 102, "A's events stored");
    await first.stop();

    // Instance B's writer alone: a later login keeps the first one's credentials; commands, a file, in the same segment.
    const second = await writer();
    b.submit(ev("cowrie.login.success", { username: "admin", password: "second" }), source);
    b.submit(ev("cowrie.command.input", { input: "uname -a" }), source);
    b.submit(ev("cowrie.session.file_download", { url: "http://x/y", shasum: "ab".repeat(32) }), source);
    await b.flush();
    await until(async () => (await stored()) === SEG_SIZE + 105, "B's events stored");

    // Both writers at once, both instances sending commands of the session.
    const third = await writer();
    for (let i = 0; i < 300; i++) {
      a.submit(ev("cowrie.command.input", { input: `a${i}` }), source);
      b.submit(ev("cowrie.command.input", { input: `b${i}` }), source);
    }
    b.submit(ev("cowrie.session.closed"), source);
    await Promise.all([a.flush(), b.flush()]);
    await until(async () => (await stored()) === SEG_SIZE + 706, "every event stored");
    expect(second.stats.stored + third.stats.stored).toBe(604);
    await Promise.all([second.stop(), third.stop(), a.stop(), b.stop()]);

    const rows = await pg.sql`select session from sessions where session = ${SESSION}`;
    expect(rows).toHaveLength(1);
    const queries = new PgSessionQueries(pg.sql);
    const page = await queries.list({ session: SESSION }, 10, null);
    const row = page.sessions[0]!;
    const ids = (await pg.sql`select id::float8 as id, ts::float8 as ts from events where data like ${`%"${SESSION}"%`} order by id`) as { id: number; ts: number }[];
    expect(ids).toHaveLength(606);
    expect(row).toMatchObject({
      session: SESSION,
      pot_id: "cowrie-01",
      src_ip: "203.0.113.44",
      events: 606,
      login_success: true,
      username: "root",
      password: "first",
      commands: 601,
      files: 1,
      closed: true,
      first_event_id: ids[0]!.id,
      last_event_id: ids.at(-1)!.id,
      start_ts: Math.min(...ids.map((r) => r.ts)),
      end_ts: Math.max(...ids.map((r) => r.ts)),
      segs: [...new Set(ids.map((r) => Math.floor(r.id / SEG_SIZE)))],
    });
    expect((await queries.events(row)).map((e) => e.id)).toEqual(ids.map((r) => r.id));
  }));
