/**
 * The writer role of a cluster instance: pulls the batches the ingest instances published
 * (wire.ts, ingest-channel.ts) from the durable consumer every writer shares, commits each to
 * PostgreSQL (db/pg/event-writer-cluster.ts: ids in commit order, each event once), then
 * acknowledges it to JetStream and publishes the stored events on the live feed.
 *
 * A batch is acknowledged only after its commit: a writer that dies before has its batch
 * delivered again (after ack_wait) to another writer, whose commit stores only what was not
 * stored yet. While PostgreSQL fails, the writer retries the same batch with a growing pause,
 * telling JetStream it is still working on it so that it is not given to another writer
 * meanwhile, and says so in `problem()` (Core's /health).
 */
import { AckPolicy, DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import type { CoreConfig } from "../config";
import { toRecord, type EventRecord, type IngestEvent } from "../core/ingest/normalise";
import { batchData } from "../db/event-store";
import { pgClient } from "../db/pg";
import { addressParts } from "../db/pg/address-part";
import { geoLookup, type GeoLookup } from "../geo";
import { PgClusterEventWriter, type ClusterCommit } from "../db/pg/event-writer-cluster";
import { PgSessionPart } from "../db/pg/session-part";
import type { PgWriteMode } from "../db/pg/event-writer";
import type { Logger } from "../log";
import { RateLimitedLog } from "../net/rate-limited-log";
import { stringify } from "../protocol/json";
import { maxPayload, type Bus } from "./connect";
import { decodeBatch, mergeBatches, type WireBatch } from "./wire";

/** How long JetStream waits for an acknowledgement before giving a batch to another writer. */
export const ACK_WAIT_MS = 10_000;
/** Batches one writer may hold unacknowledged (it works on one; the rest wait in its buffer or for redelivery). */
const MAX_ACK_PENDING = 64;
const RETENTION_EVERY_MS = 60_000;
const RETENTION_CHUNK = 2000;
const DAY_MS = 86_400_000;
/** Pull wait: how long `stop` may wait for a pull under way. */
const PULL_EXPIRES_MS = 1000;
/** Most messages one transaction takes when the writer is behind (each holds up to a whole pipeline batch). */
const MAX_MESSAGES_PER_COMMIT = 16;
/** While a batch is worked on (a long commit, commits that fail), JetStream is told so this often. */
const WORKING_EVERY_MS = Math.floor(ACK_WAIT_MS / 3);

export interface WriterRoleOptions {
  bus: Bus;
  /** The PostgreSQL database (`--db postgres://...`), migrated already. */
  pgUrl: string;
  /** `commit_stall_ms`: how long delivered events may wait with no commit before `problem()` says so (30 s unset). */
  /** `geo_enrichment` (with `geoip_db`, `asn_db`): GeoIP runs here, where events are written. */
  config: Pick<CoreConfig, "retention_days"> & Partial<Pick<CoreConfig, "commit_stall_ms" | "geo_enrichment" | "geoip_db" | "asn_db">>;
  logger: Logger;
  mode?: PgWriteMode;
  /** First and largest pause between attempts at a failing commit. */
  retryMs?: { first: number; max: number };
  /** Test hook: awaited after each commit, before the acknowledgement (a test kills the writer there). */
  afterCommit?: (commit: ClusterCommit) => Promise<void>;
  /** Told how many events of each commit were stored before (a node's replay, a redelivery): the instance's `ingest.duplicates`. */
  onDuplicates?: (n: number) => void;
}

export interface WriterRoleStats {
  /** Batches (messages) committed and acknowledged. */
  batches: number;
  /** Events stored; `duplicates` were stored before and skipped. */
  stored: number;
  duplicates: number;
  /** Messages that were not batches, dropped. */
  rejected: number;
  /** Commits that failed for a reason other than the data (PostgreSQL away, a table missing) and were retried. */
  retries: number;
}

export interface WriterRoleHandle {
  /** Finishes the batch under way (commit, ack, feed), stops pulling and closes its connection. */
  stop(): Promise<void>;
  /** Why this writer cannot commit, or null. */
  problem(): string | null;
  readonly stats: WriterRoleStats;
}

/** Makes sure the writers' durable consumer exists (several writers may start together). */
export async function ensureWriterConsumer(bus: Pick<Bus, "jsm" | "names">): Promise<void> {
  const { jsm, names } = bus;
  const config = {
    durable_name: names.writerConsumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ACK_WAIT_MS * 1e6,
    max_ack_pending: MAX_ACK_PENDING,
  };
  try {
    await jsm.consumers.info(names.eventStream, names.writerConsumer);
  } catch {
    await jsm.consumers.add(names.eventStream, config).catch(async (e) => {
      // Created by another writer meanwhile: fine.
      await jsm.consumers.info(names.eventStream, names.writerConsumer).catch(() => {
        throw e;
      });
    });
  }
}

/** Errors a retry cannot cure: the batch holds something PostgreSQL refuses (SQLSTATE classes 22 and 23). */
const refusedByDatabase = (e: unknown) => /^2[23]/.test(String((e as { errno?: unknown }).errno ?? ""));

export async function startWriterRole(opts: WriterRoleOptions): Promise<WriterRoleHandle> {
  const { bus, logger } = opts;
  const log = logger.child({ role: "writer" });
  const warn = new RateLimitedLog(log);
  const retry = opts.retryMs ?? { first: 200, max: 5000 };
  await ensureWriterConsumer(bus);
  // One connection: the writer's transactions run one at a time, and the retention lock is a session's.
  const sql = pgClient(opts.pgUrl, 1);
  const c = opts.config;
  const geo = c.geo_enrichment ? geoLookup({ geoipDb: c.geoip_db ?? "", asnDb: c.asn_db ?? "" }) : null;
  const parts = [...addressParts(geo ? (ip) => geo.lookup(ip) : undefined)];
  parts.push(new PgSessionPart());
  let writer: PgClusterEventWriter;
  try {
    writer = await PgClusterEventWriter.openCluster(sql, opts.mode, parts);
  } catch (e) {
    await sql.close().catch(() => {});
    throw e;
  }
  const consumer = await bus.js.consumers.get(bus.names.eventStream, bus.names.writerConsumer);
  const stats: WriterRoleStats = { batches: 0, stored: 0, duplicates: 0, rejected: 0, retries: 0 };
  let stopping = false;
  let failing: string | null = null;
  // Since when delivered events have waited with no commit (a commit that hangs fails nothing).
  let waitingSince: number | null = null;
  const stallMs = opts.config.commit_stall_ms ?? 30_000;
  let nextRetention = opts.config.retention_days > 0 ? 0 : Number.POSITIVE_INFINITY;
  let wakeUp: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(t);
        wakeUp = null;
        resolve();
      };
    });

  /** Commits messages as one transaction; null when stopping gave up on them (handed back to JetStream). */
  const commit = async (msgs: JsMsg[], batch: WireBatch): Promise<ClusterCommit | null> => {
    for (let pause = retry.first; ; pause = Math.min(pause * 2, retry.max)) {
      try {
        const done = await writer.writeShared(batch);
        if (failing !== null) {
          log.info({ events: batch.n }, "committing events to PostgreSQL works again");
          failing = null;
        }
        return done;
      } catch (e) {
        const err = (e as Error).message;
        if (refusedByDatabase(e)) throw e;
        if (failing === null) log.error({ err, events: batch.n }, "committing events to PostgreSQL fails: this writer is unhealthy and retries; the events wait in JetStream");
        failing = `committing events to PostgreSQL fails: ${err}`;
        stats.retries++;
        if (stopping) return null;
        for (const m of msgs) m.working();
        await sleep(pause);
        if (stopping) return null;
      }
    }
  };

  /** Decodes a message; a message that is not a batch is dropped (terminated) here. */
  const decode = (msg: JsMsg): WireBatch | null => {
    try {
      return decodeBatch(msg.data);
    } catch (e) {
      stats.rejected++;
      warn.warn("bad-batch", { subject: msg.subject, seq: msg.seq, bytes: msg.data.length, err: (e as Error).message }, "dropped a message on the ingest subject that is not an event batch");
      msg.term(); // No reason: servers before 2.10.4 ignore a "+TERM" that carries one.
      return null;
    }
  };

  /**
   * Commits the messages waiting, as one transaction, then acknowledges them. When PostgreSQL
   * refuses the lot, each is tried alone, so only the message at fault is dropped.
   */
  const handle = async (msgs: JsMsg[]): Promise<void> => {
    const taken: { msg: JsMsg; batch: WireBatch }[] = [];
    for (const msg of msgs) {
      const batch = decode(msg);
      if (batch) taken.push({ msg, batch });
    }
    if (taken.length === 0) return;
    const batch = mergeBatches(taken.map((t) => t.batch));
    // The address part runs under the writers' lock: new addresses are looked up before it (GeoLookup keeps them).
    if (geo) for (const ip of batch.srcIps.split("\n")) if (ip) geo.lookup(ip);
    const all = taken.map((t) => t.msg);
    const working = setInterval(() => {
      for (const m of all) m.working();
    }, WORKING_EVERY_MS);
    let done: ClusterCommit | null;
    try {
      done = await commit(all, batch);
    } catch (e) {
      if (taken.length > 1) {
        clearInterval(working);
        for (const t of taken) await handle([t.msg]);
        return;
      }
      stats.rejected++;
      log.error({ seq: all[0]!.seq, events: batch.n, err: (e as Error).message }, "PostgreSQL refuses a batch of events: dropped");
      all[0]!.term();
      return;
    } finally {
      clearInterval(working);
    }
    if (done === null) {
      // Stopping while PostgreSQL fails: another writer (or this one, restarted) takes them now.
      for (const m of all) m.nak();
      return;
    }
    if (opts.afterCommit) await opts.afterCommit(done);
    for (const m of all) m.ack();
    stats.batches += all.length;
    stats.stored += done.stored.length;
    const duplicates = batch.n - done.stored.length;
    stats.duplicates += duplicates;
    if (duplicates > 0) opts.onDuplicates?.(duplicates);
    // Every instance's outputs and rules read on from here (src/cluster/reader-sync.ts).
    if (done.stored.length > 0 && !bus.nc.isClosed()) bus.nc.publish(bus.names.committed, String(done.firstId + done.stored.length - 1));
    // Built while the next commit waits on PostgreSQL, rather than before it starts.
    if (done.stored.length > 0) setImmediate(() => publishFeed(bus, batch, done, geo));
  };

  const retention = async () => {
    const cutoff = Date.now() - opts.config.retention_days * DAY_MS;
    const until = Date.now() + 1000;
    let total = 0;
    try {
      for (let n = 1; n > 0 && Date.now() < until && !stopping; total += n) n = await writer.retentionStep(cutoff, RETENTION_CHUNK);
      // Done for now (or out of time for this turn: the next turn goes on).
      if (total === 0 || Date.now() >= until) nextRetention = Date.now() + (total === 0 ? RETENTION_EVERY_MS : 0);
      if (total > 0) log.info({ deleted: total, retention_days: opts.config.retention_days }, "deleted events older than the retention period");
    } catch (e) {
      nextRetention = Date.now() + RETENTION_EVERY_MS;
      warn.warn("retention-failed", { err: (e as Error).message }, "deleting old events failed; trying again later");
    }
  };

  // Messages arrive into a queue (up to max_ack_pending are outstanding); each turn commits
  // whatever waits, so a writer that is behind catches up in larger transactions.
  const queue: JsMsg[] = [];
  let arrived: (() => void) | null = null;
  const messages = await consumer.consume({
    max_messages: MAX_ACK_PENDING,
    // Short pulls: the server's heartbeats come every half of it, and two missed ones make the
    // client pull again. A pull held by a consumer leader that died went unanswered for 5-7 s
    // after JetStream had elected the next leader (commits stood still 12 s, acks 7 s).
    expires: PULL_EXPIRES_MS * 2,
    callback: (m) => {
      // Arriving while this writer stops: straight back to JetStream for another writer.
      if (stopping) {
        m.nak();
        return;
      }
      queue.push(m);
      waitingSince ??= performance.now();
      arrived?.();
    },
  });
  const nextMessages = () =>
    queue.length > 0 || stopping
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          arrived = () => {
            arrived = null;
            resolve();
          };
        });
  const retentionTimer = setInterval(() => arrived?.(), PULL_EXPIRES_MS);
  const loop = (async () => {
    while (!stopping) {
      if (Date.now() >= nextRetention) await retention();
      await nextMessages();
      if (stopping) break;
      if (queue.length === 0) continue;
      const taken = queue.splice(0, MAX_MESSAGES_PER_COMMIT);
      try {
        await handle(taken);
      } catch (e) {
        // Not the database's answer (that is handled): a fault here. The messages come back after ack_wait.
        log.error({ err: (e as Error).message, messages: taken.length }, "handling batches from the bus failed; they are delivered again");
      }
      waitingSince = queue.length > 0 ? performance.now() : null;
    }
    // What was delivered and not committed goes back at once, not after ack_wait.
    for (const m of queue.splice(0)) m.nak();
  })();

  log.info({ consumer: bus.names.writerConsumer }, "writer role started");
  return {
    stats,
    problem: () => {
      if (failing !== null) return failing;
      const waited = waitingSince === null ? 0 : performance.now() - waitingSince;
      return waited < stallMs ? null : `this writer has committed no events for ${Math.round(waited / 100) / 10} s while delivered events wait in JetStream`;
    },
    async stop() {
      if (!stopping) {
        stopping = true;
        wakeUp?.();
        arrived?.();
        clearInterval(retentionTimer);
        await messages.close().catch(() => {});
      }
      await loop;
      await sql.close().catch(() => {});
    },
  };
}

/**
 * The stored events on the live feed, as the single-instance pipeline publishes them (toRecord,
 * with `geo` where the data knows the address): one message per (node, pot) of the batch, a
 * JSON array of records.
 */
function publishFeed(bus: Pick<Bus, "nc" | "names">, b: WireBatch, done: ClusterCommit, geo: GeoLookup | null): void {
  const sources = new Map(b.newSources.map((s) => [s.id, s]));
  const types = new Map(b.newTypes.map((t) => [t.id, t.name]));
  const ips = b.srcIps.split("\n");
  const data = batchData(b);
  const groups = new Map<string, { nodeId: string | null; potId: string | null; records: EventRecord[] }>();
  for (let k = 0; k < done.stored.length; k++) {
    const i = done.stored[k]!;
    const s = sources.get(b.sourceId[i]!)!;
    const ev = {
      node_id: s.nodeId === null ? null : BigInt(s.nodeId),
      pot_id: s.potId,
      pot_type: s.potType,
      event_type: types.get(b.typeId[i]!)!,
      ts: b.ts[i]!,
      src_ip: ips[i] || null,
      text: data[i]!,
    } as IngestEvent & { text: string };
    const key = JSON.stringify([s.nodeId, s.potId]);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { nodeId: s.nodeId, potId: s.potId, records: [] }));
    const record = toRecord(done.firstId + k, ev);
    const known = geo && ev.src_ip ? geo.known(ev.src_ip) : undefined;
    if (known) record.geo = known;
    g.records.push(record);
  }
  // Each message under the servers' max_payload: a big batch of one pot goes as several.
  const limit = maxPayload(bus.nc) - 1024;
  for (const g of groups.values()) {
    const subject = bus.names.feedSubject("PotEvent", g.nodeId, g.potId);
    let parts: string[] = [];
    let size = 2;
    const send = () => {
      if (parts.length === 0) return;
      try {
        bus.nc.publish(subject, `[${parts.join(",")}]`);
      } catch {
        // The bus is closing or away: the feed is live only, the events are stored.
      }
      parts = [];
      size = 2;
    };
    for (const r of g.records) {
      const text = stringify(r);
      const bytes = Buffer.byteLength(text) + 1;
      if (size + bytes > limit) send();
      // A record too large for a message of its own is left out of the feed (it is stored).
      if (2 + bytes > limit) continue;
      parts.push(text);
      size += bytes;
    }
    send();
  }
}
