/**
 * The PostgreSQL event store on the machine's server (tests/helpers/postgres.ts): day
 * partitions, retention by whole partitions, COPY's escaping, and a Core that cannot reach
 * its database.
 */
import { expect, test } from "bun:test";
import { startCore } from "../../src/core";
import type { EventBatch } from "../../src/db/event-store";
import { openPgDatabase, pgClient } from "../../src/db/pg";
import { PgEventQueries } from "../../src/db/pg/event-queries";
import { PgEventWriter, type PgWriteMode } from "../../src/db/pg/event-writer";
import { DAY_MS, partitionDays } from "../../src/db/pg/partitions";
import { silentLogger } from "../../src/log";
import { scratchDatabase } from "../helpers/postgres";

/** A batch as the pipeline seals it, of events (time, address, data text). */
function batch(events: [number, string, string][], first: boolean): EventBatch {
  const texts = events.map((e) => e[2]);
  const bytes = new TextEncoder().encode(texts.join(""));
  const dataEnds = new Int32Array(events.length);
  for (let i = 0, at = 0; i < events.length; i++) dataEnds[i] = at += Buffer.byteLength(texts[i]!);
  return {
    n: events.length,
    ts: Float64Array.from(events.map((e) => e[0])),
    sourceId: new Int32Array(events.length).fill(1),
    typeId: new Int32Array(events.length).fill(1),
    srcIps: events.map((e) => e[1]).join("\n"),
    data: bytes.buffer as ArrayBuffer,
    dataEnds,
    credCounts: "",
    newSources: first ? [{ id: 1, nodeId: "7", potId: "cowrie-01", potType: "cowrie" }] : [],
    newTypes: first ? [{ id: 1, name: "cowrie.login.failed" }] : [],
    spools: [],
  };
}

async function withStore(run: (w: PgEventWriter, q: PgEventQueries, sql: ReturnType<typeof pgClient>) => Promise<void>, mode: PgWriteMode = "copy") {
  const db = await scratchDatabase("honeybee_test");
  const migrated = await openPgDatabase(db.url, 2);
  const writerSql = pgClient(db.url, 1);
  try {
    await run(await PgEventWriter.open(writerSql, mode), new PgEventQueries(migrated.$client), migrated.$client);
  } finally {
    await writerSql.close();
    await migrated.$client.close();
    await db.drop();
  }
}

for (const mode of ["copy", "insert"] as const) {
  test(`${mode}: data with tabs, backslashes and escapes comes back exactly`, () =>
    withStore(async (w, q) => {
      const now = Date.now();
      const data = ['{"a":"tab\\there","b":"back\\\\slash"}', '{\t"raw":\t"whitespace"}', '{"u":"\\u0000 nul, \\"quoted\\", ünïcode"}'];
      const first = await w.write(batch(data.map((d, i) => [now + i, i === 1 ? "" : `203.0.113.${i}`, d]), true));
      for (let i = 0; i < data.length; i++) {
        const e = await q.get(first + i);
        expect(e && { ip: e.src_ip, data: e.data }).toEqual({ ip: i === 1 ? null : `203.0.113.${i}`, data: JSON.parse(data[i]!) });
      }
    }, mode));
}

test("events land in day partitions; retention drops whole days and old events of the default partition", () =>
  withStore(async (w, q, sql) => {
    const today = Math.floor(Date.now() / DAY_MS);
    const yesterday = (today - 1) * DAY_MS + 1000;
    const longAgo = (today - 40) * DAY_MS + 1000;
    const now = Date.now();
    await w.write(batch([[yesterday, "198.51.100.1", '{"n":1}'], [yesterday + 1, "198.51.100.2", '{"n":2}'], [longAgo, "198.51.100.3", '{"n":3}'], [now, "198.51.100.4", '{"n":4}'], [(today + 30) * DAY_MS, "198.51.100.5", '{"n":5}']], true));
    await w.flushCounts();
    const days = await partitionDays(sql);
    expect([today - 1, today, today + 1, today + 2].every((d) => days.has(d))).toBe(true);
    expect(days.has(today - 40) || days.has(today + 30)).toBe(false);
    const where = async () => (await sql`select tableoid::regclass::text as t, count(*)::int as n from events group by 1 order by 1`).map((r: any) => [r.t, r.n]);
    const yName = `events_${new Date((today - 1) * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`;
    const tName = `events_${new Date(today * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`;
    expect(await where()).toEqual([[yName, 2], [tName, 1], ["events_default", 2]].sort((a, b) => String(a[0]).localeCompare(String(b[0]))) as any);
    expect((await q.stats(40 * DAY_MS, 10)).totalEvents).toBe(5);

    // Keep today on: yesterday's partition is dropped whole, the old event of the default partition deleted, the future one kept.
    const removed: number[] = [];
    for (let n: number; (n = await w.retentionStep(today * DAY_MS, 1000)) > 0; ) removed.push(n);
    expect(removed).toEqual([2, 1]);
    expect((await partitionDays(sql)).has(today - 1)).toBe(false);
    expect(await where()).toEqual([[tName, 1], ["events_default", 1]]);
    const page = await q.list({}, 10, null);
    expect(page.events.map((e) => e.data)).toEqual([{ n: 5 }, { n: 4 }]);
    expect((await q.stats(40 * DAY_MS, 10)).totalEvents).toBe(2);
    expect((await q.list({ srcIp: "198.51.100.4" }, 10, null)).events.map((e) => e.src_ip)).toEqual(["198.51.100.4"]);
  }));

test("a PostgreSQL database that cannot be reached stops Core at start with a message naming it", async () => {
  const err = await startCore({ host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, db: "postgres://postgres:secret@127.0.0.1:1/nowhere" }, silentLogger()).catch((e) => e);
  expect(err.name).toBe("DatabaseOpenError");
  expect(err.message).toStartWith("cannot use the PostgreSQL database postgres://postgres:***@127.0.0.1:1/nowhere: ");
  expect(err.message).not.toContain("secret");
});

test("a day's partition created after its events went to the default partition takes them over", () =>
  withStore(async (w, q, sql) => {
    const today = Math.floor(Date.now() / DAY_MS);
    const later = (today + 9) * DAY_MS + 5000;
    const first = await w.write(batch([[later, "192.0.2.1", '{"n":1}']], true));
    const where = async () => (await sql`select tableoid::regclass::text as t from events`).map((r: any) => r.t);
    expect(await where()).toEqual(["events_default"]);
    // A week on, the partitions ahead reach that day.
    await w.partitionsAhead(Date.now() + 7 * DAY_MS);
    expect(await where()).toEqual([`events_${new Date((today + 9) * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`]);
    expect((await q.get(first))?.data).toEqual({ n: 1 });
  }));
