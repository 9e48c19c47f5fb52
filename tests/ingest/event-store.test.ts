import { sqliteEventWriting } from "../../src/db/writer-channel";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { createIngest } from "../../src/core/ingest";
import { openDatabase, type Db } from "../../src/db";
import { EventQueries, type EventFilter } from "../../src/db/event-queries";
import { EventWriter } from "../../src/db/event-writer";
import { SEG_SIZE } from "../../src/db/event-store";
import { ipv4Of, ipv4Text } from "../../src/net/ipv4";
import { silentLogger } from "../../src/log";
import { tempDir, until } from "../helpers";

const DAY = 86_400_000;
const NOW = Date.now();

interface Sent {
  id: number;
  node: bigint;
  pot: string;
  potType: string;
  type: string;
  ip: string;
  ts: number;
}

/** Writes events through the real pipeline (writer thread when `worker`) and returns what was sent, by id. */
async function fill(db: Db, path: string, n: number, opts: { worker?: boolean; seed?: number; statsFlushMs?: number } = {}): Promise<Sent[]> {
  const config = defaultCoreConfig({ db: path, ingest_worker: opts.worker ?? true, batch_size: 700, log_events: false, stats_flush_ms: opts.statsFlushMs ?? 0 });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  let s = opts.seed ?? 1;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const sent: Sent[] = [];
  for (let i = 0; i < n; i++) {
    const pot = ["ssh-a", "ssh-b", "web-c"][Math.floor(rnd() * 3)]!;
    const e: Sent = {
      id: i + 1,
      node: pot === "web-c" ? 2n : 18446744073709551557n,
      pot,
      potType: pot === "web-c" ? "honnypotter" : "cowrie",
      // A skewed address mix with a long tail of rare ones, and a few rare event types.
      ip: `10.0.${Math.floor(rnd() ** 3 * 40)}.${Math.floor(rnd() * 8)}`,
      type: rnd() < 0.02 ? "cowrie.session.file_download" : ["cowrie.login.failed", "cowrie.login.failed", "cowrie.session.connect", "cowrie.command.input"][Math.floor(rnd() * 4)]!,
      ts: NOW - 2 * DAY + Math.floor(rnd() * 2 * DAY),
    };
    sent.push(e);
    ingest.submit({ eventid: e.type, node_id: e.node, pot_id: e.pot, pot_type: e.potType, src_ip: e.ip, timestamp: e.ts, username: `u${i % 5}` }, { transport: "events", remote: "test" });
  }
  await ingest.stop();
  return sent;
}

function pageAll(q: EventQueries, f: EventFilter, limit: number): number[] {
  const out: number[] = [];
  let cursor: number | null = null;
  do {
    const page = q.list(f, limit, cursor);
    out.push(...page.events.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor !== null);
  return out;
}

test("segment-pruned queries (time ranges, type and source keys, address Bloom filters) return exactly what a full scan would", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const sent = await fill(db, path, 3 * SEG_SIZE + 1234);
  const q = new EventQueries(db);
  const byId = [...sent].reverse();
  const rareIp = sent.map((e) => e.ip).find((ip) => sent.filter((e) => e.ip === ip).length === 1)!;
  const filters: [EventFilter, (e: Sent) => boolean][] = [
    [{ srcIp: "10.0.0.1" }, (e) => e.ip === "10.0.0.1"],
    [{ srcIp: rareIp }, (e) => e.ip === rareIp],
    [{ srcIp: "192.0.2.1" }, () => false],
    [{ eventType: "cowrie.session.file_download" }, (e) => e.type === "cowrie.session.file_download"],
    [{ potId: "web-c" }, (e) => e.pot === "web-c"],
    [{ potType: "cowrie", nodeId: 18446744073709551557n }, (e) => e.potType === "cowrie"],
    [{ nodeId: 2n, eventType: "cowrie.command.input" }, (e) => e.node === 2n && e.type === "cowrie.command.input"],
    [{ since: NOW - DAY, until: NOW - DAY / 2 }, (e) => e.ts >= NOW - DAY && e.ts < NOW - DAY / 2],
    [{ srcIp: "10.0.1.3", since: NOW - DAY }, (e) => e.ip === "10.0.1.3" && e.ts >= NOW - DAY],
  ];
  for (const [f, match] of filters) {
    const want = byId.filter(match).map((e) => e.id);
    expect(pageAll(q, f, 97)).toEqual(want);
  }
  const one = q.get(sent[4000]!.id)!;
  expect(one).toMatchObject({ id: 4001, node_id: sent[4000]!.node, pot_id: sent[4000]!.pot, event_type: sent[4000]!.type, src_ip: sent[4000]!.ip, ts: sent[4000]!.ts });

  // The plans: segment lookups by primary key, event reads as rowid ranges; no table scan of events.
  const plan = (sql: string) => (db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join("; ");
  expect(plan("SELECT * FROM events WHERE id >= 1 AND id <= 4096 AND src_ip = '10.0.0.1' ORDER BY id DESC LIMIT 10")).toContain("USING INTEGER PRIMARY KEY");
  expect(plan("SELECT DISTINCT seg FROM event_segment_keys WHERE kind = 'type' AND value IN (1) AND seg <= 9")).toContain("USING COVERING INDEX");
  expect(plan("SELECT key, sum(count) FROM event_counts WHERE kind = 'src_ip' AND bucket >= 5 GROUP BY key")).toContain("USING INDEX");
  db.$client.close();
});

test("stats counters are exact, and a crash before they were written is recounted at the next start", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  // Inline writer, counters held back as if the process died before writing them.
  const config = defaultCoreConfig({ db: path, ingest_worker: false, stats_flush_ms: 60_000, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  for (let i = 0; i < 50; i++) ingest.submit({ eventid: "cowrie.login.failed", src_ip: `10.0.0.${i % 2}`, username: i < 30 ? "root" : "admin", password: "pw", timestamp: NOW }, { transport: "events", remote: "t" });
  await ingest.flush();
  const q = new EventQueries(db);
  expect(q.stats(DAY, 5).top.username).toEqual([]);

  new EventWriter(db); // what a restart does
  const s = q.stats(DAY, 5);
  expect(s.totalEvents).toBe(50);
  expect(s.windowEvents).toBe(50);
  expect(s.top.username).toEqual([
    { value: "root", count: 30 },
    { value: "admin", count: 20 },
  ]);
  expect(s.top.src_ip).toEqual([
    { value: "10.0.0.0", count: 25 },
    { value: "10.0.0.1", count: 25 },
  ]);
  expect(s.top.password).toEqual([{ value: "pw", count: 50 }]);
  db.$client.close();
});

test("source addresses are counted exactly whatever their form (IPv4 as numbers, the rest as text)", async () => {
  for (const ip of ["0.0.0.0", "10.0.0.1", "255.255.255.255", "192.168.1.20"]) expect(ipv4Text(ipv4Of(ip))).toBe(ip);
  for (const ip of ["010.0.0.1", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1..2.3", "2001:db8::1", "a.b.c.d", "1.2.3.4 "]) expect(ipv4Of(ip)).toBe(-1);

  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const config = defaultCoreConfig({ db: path, ingest_worker: false, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const sent: Record<string, number> = { "203.0.113.7": 5, "2001:db8::1": 4, "010.0.0.1": 3, "10.0.0.1": 2, "255.255.255.255": 1 };
  for (const [ip, n] of Object.entries(sent)) for (let i = 0; i < n; i++) ingest.submit({ eventid: "cowrie.session.connect", src_ip: ip, timestamp: NOW }, { transport: "events", remote: "t" });
  await ingest.stop(); // writes the counters
  expect(new EventQueries(db).stats(DAY, 10).top.src_ip).toEqual(Object.entries(sent).map(([value, count]) => ({ value, count })));
  db.$client.close();
});

test("stats over days read the daily sums of finished days and give exactly what the hourly counters give", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const config = defaultCoreConfig({ db: path, ingest_worker: false, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  // Five days of events, a different mix each day, at the first and the last hour of each day:
  // a day counted twice, or an hour at a day's edge counted twice or not at all, shows.
  const send = (n: number, ts: number, ip: string, user: string) => {
    for (let i = 0; i < n; i++) ingest.submit({ eventid: i % 3 ? "cowrie.login.failed" : "cowrie.session.connect", src_ip: ip, username: user, timestamp: ts }, { transport: "events", remote: "t" });
  };
  const today = Math.floor(NOW / DAY) * DAY;
  const HALF_HOUR = 1_800_000;
  for (let d = 1; d <= 5; d++) {
    send(10 + d, today - d * DAY + HALF_HOUR, `10.0.0.${d}`, `user${d}`);
    send(3, today - d * DAY - HALF_HOUR, "10.0.0.9", "root");
  }
  send(2, today - HALF_HOUR, "10.0.0.7", "eve");
  send(7, NOW, "10.0.0.8", "today");
  await ingest.stop();
  const q = new EventQueries(db);
  const sinceDay = (d: number) => NOW - (today - d * DAY);
  const windows = [DAY, sinceDay(2), sinceDay(2) + 3_600_000, sinceDay(3) - 3_600_000, 3 * DAY, 7 * DAY, 30 * DAY];
  // Past days' counts went to the daily sums as they were written (the store was new: every
  // earlier day counts as finished). As a database from before daily sums: hourly only.
  const withDaily = windows.map((w) => q.stats(w, 20));
  db.$client.exec("DELETE FROM event_counts_daily; DELETE FROM event_meta WHERE key = 'counts_daily_through'");
  const before = windows.map((w) => q.stats(w, 20));
  expect(withDaily).toEqual(before);
  expect(before[5]!.windowEvents).toBe(5 * 3 + 11 + 12 + 13 + 14 + 15 + 2 + 7);

  const writer = new EventWriter(db); // sums up one finished day per call
  let days = 0;
  while (writer.rollUpDay()) days++;
  expect(days).toBeGreaterThanOrEqual(4);
  expect(db.$client.prepare("SELECT count(*) AS n FROM event_counts_daily").get()).not.toEqual({ n: 0 });
  expect(windows.map((w) => q.stats(w, 20))).toEqual(before);

  // An event that arrives late for a day already summed up is counted in both.
  const late = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  late.submit({ eventid: "cowrie.login.failed", src_ip: "10.0.0.9", username: "root", timestamp: NOW - 3 * DAY }, { transport: "events", remote: "t" });
  await late.stop();
  const after = q.stats(7 * DAY, 20);
  expect(after.windowEvents).toBe(before[5]!.windowEvents + 1);
  expect(after.top.username.find((e) => e.value === "root")).toEqual({ value: "root", count: 16 });

  const plan = (db.$client.prepare("EXPLAIN QUERY PLAN SELECT key, count FROM event_counts_daily WHERE kind = 'src_ip' AND day >= 1 AND day < 9").all() as { detail: string }[]).map((r) => r.detail).join("; ");
  expect(plan).toContain("USING INDEX");
  db.$client.close();
});

test("retention deletes old events in small steps, with their summaries and counters", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const sent = await fill(db, path, 2 * SEG_SIZE + 500, { worker: false, seed: 3 });
  const writer = new EventWriter(db);
  const cutoff = NOW - DAY;
  let steps = 0;
  for (let n = writer.retentionStep(cutoff, 500); n > 0; n = writer.retentionStep(cutoff, 500)) steps++;
  expect(steps).toBeGreaterThan(2);
  const q = new EventQueries(db);
  const kept = sent.filter((e) => e.ts >= cutoff).map((e) => e.id).reverse();
  expect(pageAll(q, {}, 1000)).toEqual(kept);
  expect(pageAll(q, { srcIp: "10.0.0.1" }, 1000)).toEqual(sent.filter((e) => e.ts >= cutoff && e.ip === "10.0.0.1").map((e) => e.id).reverse());
  expect(q.stats(30 * DAY, 1).totalEvents).toBe(kept.length);

  // Everything deleted: ids go on from the last one ever given, so no id names two events.
  while (writer.retentionStep(NOW + DAY, 500) > 0);
  expect(pageAll(q, {}, 1000)).toEqual([]);
  const after = new EventWriter(db); // what a restart does
  const batch = { n: 1, ts: new Float64Array([NOW]), sourceId: new Int32Array([1]), typeId: new Int32Array([1]), srcIps: "", data: Buffer.from("{}").buffer, dataEnds: new Int32Array([2]), credCounts: "", newSources: [], newTypes: [], spools: [] };
  expect(after.write(batch)).toBe(sent.length + 1);
  db.$client.close();
});

test("Core deletes events older than retention_days when it starts", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const sent = await fill(db, path, 300, { worker: false, seed: 5 });
  const config = defaultCoreConfig({ db: path, retention_days: 1, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const q = new EventQueries(db);
  const kept = sent.filter((e) => e.ts >= Date.now() - DAY).length;
  await until(() => q.stats(30 * DAY, 1).totalEvents === kept, "old events deleted");
  await ingest.stop();
  db.$client.close();
});

test("stats top lists stay exact when older hours of the window change after they were summed (late events) and across the newest hours", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  const config = defaultCoreConfig({ db: path, ingest_worker: false, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const q = new EventQueries(db);
  const send = async (user: string, n: number, ageHours: number) => {
    for (let i = 0; i < n; i++) ingest.submit({ eventid: "cowrie.login.failed", src_ip: "10.0.0.1", username: user, password: "pw", timestamp: NOW - ageHours * 3_600_000 }, { transport: "events", remote: "t" });
    await ingest.flush();
    await ingest.countsSettled();
  };
  await send("root", 5, 6);
  await send("admin", 4, 0);
  await send("guest", 4, 6);
  expect(q.stats(DAY, 2).top.username).toEqual([{ value: "root", count: 5 }, { value: "admin", count: 4 }]);
  // A late event in an hour already summed: counted at once.
  await send("guest", 2, 6);
  expect(q.stats(DAY, 2).top.username).toEqual([{ value: "guest", count: 6 }, { value: "root", count: 5 }]);
  // The newest hour lifts a key past the older hours' leaders; ties go by key.
  await send("admin", 2, 0);
  expect(q.stats(DAY, 3).top.username).toEqual([{ value: "admin", count: 6 }, { value: "guest", count: 6 }, { value: "root", count: 5 }]);
  await ingest.stop();
  db.$client.close();
});
