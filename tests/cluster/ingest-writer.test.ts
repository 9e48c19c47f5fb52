/**
 * The cluster's event data plane on the machine's PostgreSQL and NATS (tests/cluster/helpers.ts):
 * ingest pipelines publish to JetStream (src/cluster/ingest-channel.ts), writer roles commit
 * to PostgreSQL (src/cluster/writer-role.ts).
 */
import { expect, test } from "bun:test";
import { decodeBatch } from "../../src/cluster/wire";
import { ACK_WAIT_MS, startWriterRole, type WriterRoleHandle, type WriterRoleStats } from "../../src/cluster/writer-role";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { startEventSocket } from "../../src/core/ingest/event-socket";
import { EventPipeline } from "../../src/core/ingest/pipeline";
import { pgWriter } from "../../src/db/pg/writer-channel";
import { bloomHas } from "../../src/db/bloom";
import { SEG_SIZE } from "../../src/db/event-store";
import { openPgDatabase } from "../../src/db/pg";
import { createLogger, silentLogger } from "../../src/log";
import { parseWithIds, stringify } from "../../src/protocol/json";
import { BIG_ID, LineClient } from "../helpers";
import { scratchDatabase } from "../helpers/postgres";
import { countRows, ingestPipeline, sampleEvents, storedRows, until, withCluster } from "./helpers";

const source = { transport: "events" as const, remote: "test" };

test("events through JetStream and a writer are stored as the single-instance PostgreSQL path stores them; the feed carries the same records", () =>
  withCluster(async ({ bus, pg }) => {
    const events = sampleEvents(600);
    // Small messages: batches are cut, and the writer counts credentials from the data.
    const ingest = ingestPipeline(bus, { batchSize: 100, maxBytes: 16 * 1024 });
    for (const e of events) expect(ingest.submit(e, source)).toBeNull();
    await ingest.flush();
    expect(ingest.counters).toMatchObject({ committed: 600, pending: 0 });
    expect(ingest.problem()).toBeNull();

    const feed: unknown[] = [];
    const subjects = new Set<string>();
    const sub = bus.nc.subscribe(bus.names.feedAll, {
      callback: (_e, m) => {
        subjects.add(m.subject);
        feed.push(...(parseWithIds(m.string()) as unknown[]));
      },
    });
    const writer = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
    await until(() => writer.stats.stored === 600, "600 events stored");
    await until(() => feed.length === 600, "600 events on the feed");
    await writer.stop();
    sub.unsubscribe();

    // The same events on the single-instance path, on a database of its own.
    const single = await scratchDatabase("honeybee_test");
    const singleDb = await openPgDatabase(single.url, 2);
    try {
      const local = new MessageBus();
      const published: unknown[] = [];
      local.subscribe(
        (m) => published.push(m.payload),
        () => true,
      );
      const pipeline = new EventPipeline({
        config: defaultCoreConfig({ batch_size: 100, batch_delay_ms: 1 }),
        writer: pgWriter(single.url),
        bus: local,
        logger: silentLogger(),
        nodeOfPot: () => null,
        dictionaries: { sources: [], types: [] },
      });
      for (const e of events) pipeline.submit(e, source);
      await pipeline.flush();
      await pipeline.stop();
      expect(await storedRows(pg.sql)).toEqual(await storedRows(singleDb.$client));
      expect(await countRows(pg.sql)).toEqual(await countRows(singleDb.$client));
      const segs = (sql: Bun.SQL) => sql`select seg, min_ts::float8, max_ts::float8, count, ip_bloom from event_segments order by seg`;
      expect(await segs(pg.sql)).toEqual(await segs(singleDb.$client));
      const byId = (a: any, b: any) => a.id - b.id;
      expect(stringify([...feed].sort(byId))).toBe(stringify(published));
    } finally {
      await singleDb.$client.close();
      await single.drop();
    }
    const nodeSubject = bus.names.feedSubject("PotEvent", "18446744073709551557", "cowrie-01");
    expect([...subjects].sort()).toEqual([nodeSubject, bus.names.feedSubject("PotEvent", "18446744073709551557", "cowrie-02"), bus.names.feedSubject("PotEvent", null, "dionaea.1")].sort());
  }));

/** A node's spool stream to an ingest instance's event socket: events first+1.. of `events`, until all are acknowledged. */
async function sendSpool(port: number, events: Record<string, unknown>[], first = 0) {
  using c = await LineClient.connect(port);
  c.send("EventStreamHello", { node_id: BIG_ID, acks: true, spool_id: "spool-a", first_seq: first });
  c.sendRaw(events.map((e) => `${stringify(e)}\n`).join(""));
  for (;;) if ((await c.nextKind("EventAck")).seq === events.length) break;
}

test("a batch published twice, and a node's spool sent again to another instance, are stored once; identical events without a position are new events", () =>
  withCluster(async ({ bus, pg, connect }) => {
    const writer = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
    // Two ingest instances, each with its event socket; the node is at home on both (its address).
    const instances = [ingestPipeline(bus, { batchSize: 50 }), ingestPipeline(await connect(), { batchSize: 30 })];
    const sockets = instances.map((ingest) =>
      startEventSocket({ host: "127.0.0.1", port: 0, ingest, config: defaultCoreConfig(), logger: silentLogger(), isNodeAt: () => true }),
    );
    try {
      // Capture what the ingest side publishes, to publish it again under a new message id.
      const copies: Uint8Array[] = [];
      const tap = bus.nc.subscribe(bus.names.ingestAll, { callback: (_e, m) => void copies.push(m.data.slice()) });
      await sendSpool(sockets[0]!.port, sampleEvents(200));
      await until(() => writer.stats.stored === 200, "200 stored");
      // However the socket's chunks cut the batches: every event's message seen.
      await until(() => copies.reduce((n, m) => n + decodeBatch(m).n, 0) === 200, "the messages of 200 events seen");
      tap.unsubscribe();
      for (const [i, m] of copies.entries()) await bus.js.publish(bus.names.ingestSubject("replay"), m, { msgID: `replay-${i}` });
      // The node sends its spool again from the start, to the other instance, with 50 new events.
      await sendSpool(sockets[1]!.port, sampleEvents(250));
      await until(() => writer.stats.stored + writer.stats.duplicates === 650, "every delivered event handled");
      expect(writer.stats).toMatchObject({ stored: 250, duplicates: 400, rejected: 0 });
      const [r] = await pg.sql`select count(*)::int as n, count(distinct data)::int as d, min(id)::int as lo, max(id)::int as hi from events`;
      expect(r).toEqual({ n: 250, d: 250, lo: 1, hi: 250 });
      // A sender without positions (the control channel, a honeypot's own output) never resends: the same events twice are twice as many.
      for (const e of [...sampleEvents(10), ...sampleEvents(10)]) instances[1]!.submit(e, source);
      await instances[1]!.flush();
      await until(() => writer.stats.stored === 270, "20 more stored");
      expect(writer.stats).toMatchObject({ stored: 270, duplicates: 400 });
    } finally {
      for (const s of sockets) await s.stop();
      for (const i of instances) await i.stop();
      await writer.stop();
    }
  }));

test("two writers on one stream store every event once, ids growing in commit order, summaries whole", () =>
  withCluster(async ({ bus, pg, connect }) => {
    const commits: { writer: number; firstId: number; n: number }[] = [];
    const start = async (w: number) =>
      startWriterRole({ bus: await connect(), pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger(), afterCommit: async (c) => void commits.push({ writer: w, firstId: c.firstId, n: c.stored.length }) });
    const writers = [await start(0), await start(1)];
    try {
      const ingest = ingestPipeline(bus, { batchSize: 40 });
      const events = sampleEvents(2000);
      for (const e of events) ingest.submit(e, source);
      await ingest.flush();
      await until(() => writers[0]!.stats.stored + writers[1]!.stats.stored === 2000, "2000 stored");
      expect(writers.every((w) => w.stats.batches > 0)).toBe(true);
      // The ids of the commits, without gaps or overlaps: a writer takes its ids under a lock
      // row held until its commit, so they grow in commit order. (The two writers' afterCommit
      // calls share this process's event loop and may be seen in either order under load.)
      let next = 1;
      for (const c of commits.toSorted((a, b) => a.firstId - b.firstId)) {
        expect(c.firstId).toBe(next);
        next += c.n;
      }
      const rows = await storedRows(pg.sql);
      expect(rows.length).toBe(2000);
      expect(new Set(rows.map((r: any) => JSON.parse(r.data).seq)).size).toBe(2000);
      // Every address is in its segment's filter, whichever writer wrote it.
      const blooms = new Map((await pg.sql`select seg::int as seg, ip_bloom, count from event_segments`).map((s: any) => [s.seg, s]));
      for (const r of rows) if (r.src_ip) expect(bloomHas(new Uint8Array((blooms.get(Math.floor(r.id / SEG_SIZE)) as any).ip_bloom), r.src_ip)).toBe(true);
      expect([...blooms.values()].reduce((n, s: any) => n + s.count, 0)).toBe(2000);
      const [c] = await pg.sql`select sum(count)::int as n from event_counts where kind = 'username'`;
      expect(c.n).toBe(2000);
      await ingest.stop();
    } finally {
      for (const w of writers) await w.stop();
    }
  }));

test("a writer stopped mid-stream finishes its batch; the other stores the rest, each event once", () =>
  withCluster(async ({ bus, pg, connect }) => {
    // Stopped right after its first commit (the hook runs between the commit and the ack):
    // what it took and committed is acknowledged, what waited in its queue goes back.
    let stopped: Promise<void> | null = null;
    const first: WriterRoleHandle = await startWriterRole({
      bus: await connect(),
      pgUrl: pg.url,
      config: { retention_days: 0 },
      logger: silentLogger(),
      afterCommit: async () => {
        stopped ??= first.stop();
      },
    });
    const ingest = ingestPipeline(bus, { batchSize: 25 });
    for (const e of sampleEvents(6000)) ingest.submit(e, source);
    await ingest.flush();
    await until(() => stopped !== null, "the first writer's first commit");
    await stopped;
    const second = await startWriterRole({ bus: await connect(), pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
    try {
      // What the server had sent the stopped writer's pull and it never took comes back after ack_wait (10 s).
      // Until the consumer holds nothing, so a message delivered twice would be counted below.
      await until(
        async () => {
          if (first.stats.stored + second.stats.stored < 6000) return false;
          const info = await bus.jsm.consumers.info(bus.names.eventStream, bus.names.writerConsumer);
          return info.num_pending === 0 && info.num_ack_pending === 0;
        },
        "6000 stored and nothing left with the consumer",
        3 * ACK_WAIT_MS,
      );
      const [r] = await pg.sql`select count(*)::int as n, count(distinct data)::int as d from events`;
      // One comparison, so a failure shows every figure.
      const each = (s: WriterRoleStats) => ({ someStored: s.stored > 0 && s.stored < 6000, duplicates: s.duplicates });
      expect({ first: each(first.stats), second: each(second.stats), rows: r, stored: [first.stats.stored, second.stats.stored] }).toMatchObject({
        first: { someStored: true, duplicates: 0 },
        second: { someStored: true, duplicates: 0 },
        rows: { n: 6000, d: 6000 },
      });
    } finally {
      await second.stop();
      await ingest.stop();
    }
  }));

test("a batch larger than the server's max_payload goes in several messages and is stored whole", () =>
  withCluster(async ({ bus, pg }) => {
    const writer = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
    try {
      const ingest = ingestPipeline(bus, { batchSize: 3000 });
      const pad = "x".repeat(1000);
      const events = sampleEvents(3000).map((e) => ({ ...e, pad }));
      const published: number[] = [];
      const tap = bus.nc.subscribe(bus.names.ingestAll, { callback: (_e, m) => void published.push(m.data.length) });
      for (const e of events) ingest.submit(e, source);
      await ingest.flush();
      expect(ingest.problem()).toBeNull();
      await until(() => writer.stats.stored === 3000, "3000 stored");
      tap.unsubscribe();
      expect(published.length).toBeGreaterThanOrEqual(3);
      expect(Math.max(...published)).toBeLessThanOrEqual(bus.nc.info!.max_payload);
      const [r] = await pg.sql`select count(*)::int as n, count(distinct data)::int as d from events`;
      expect(r).toEqual({ n: 3000, d: 3000 });
      await ingest.stop();
    } finally {
      await writer.stop();
    }
  }));

test("a message on the ingest subject that is not a batch is logged and dropped; the writer goes on", () =>
  withCluster(async ({ bus, pg }) => {
    const lines: string[] = [];
    const logger = createLogger("info", { destination: { write: (l: string) => void lines.push(l) } });
    const writer = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger });
    try {
      await bus.js.publish(bus.names.ingestSubject("intruder"), new TextEncoder().encode('{"eventid":"not a batch"}'));
      const ingest = ingestPipeline(bus);
      for (const e of sampleEvents(10)) ingest.submit(e, source);
      await ingest.flush();
      await until(() => writer.stats.stored === 10, "10 stored");
      expect(writer.stats.rejected).toBe(1);
      const warned = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "dropped a message on the ingest subject that is not an event batch");
      expect(warned).toMatchObject({ level: 40, err: "not an event batch: no batch header" });
      // Terminated, not left for redelivery (acknowledgements are sent without waiting for an answer).
      await until(async () => {
        const info = await bus.jsm.consumers.info(bus.names.eventStream, bus.names.writerConsumer);
        return info.num_pending === 0 && info.num_ack_pending === 0;
      }, "no message left with the consumer", 5000);
      expect(writer.problem()).toBeNull();
      await ingest.stop();
    } finally {
      await writer.stop();
    }
  }));
