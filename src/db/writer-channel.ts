/**
 * The channel from the pipeline to the event writer. Two implementations of one interface:
 *
 * - a worker thread with its own SQLite connection (file databases), so that parsing and
 *   writing use both cores: on these 2-core machines the single-thread design tops out near
 *   0.3M events/s (bench/ingest.ts measures both), and a second worker that checkpoints the
 *   WAL (checkpointer.ts) so that the writer never stops to copy it;
 * - inline on the caller's connection, for `:memory:` databases (a worker cannot open the
 *   same in-memory database) and for `ingest_worker: false`.
 *
 * Requests are answered in the order they were sent; the writer runs one at a time.
 */
import type { Db } from "./index";
import { EventWriter } from "./event-writer";
import type { EventBatch } from "./event-store";
import { geoLookup, type GeoSources } from "../geo";
import type { Logger } from "../log";
import type { CheckpointReply, CheckpointRequest } from "./checkpointer";
import { EventQueries } from "./event-queries";

export type WriterRequest =
  | { op: "open"; path: string; autoCheckpoint: boolean; geo: GeoSources | null }
  | { op: "write"; batch: EventBatch }
  | { op: "flushCounts" }
  | { op: "retention"; cutoffMs: number; maxRows: number }
  | { op: "resume" }
  | { op: "close" };

export interface WriteResult {
  /** The id of the batch's first event; null where the channel gives none (the cluster's ingest-channel.ts). */
  firstId: number | null;
  countsPending: boolean;
}

export interface WriterChannel {
  /**
   * Commits a batch. After a failed write every later write fails too, until `resume()`:
   * batches must commit in the order they were sealed (ids, acks), so the caller re-sends
   * the failed one and everything after it, in order. A channel that moves `batch.data` to
   * another thread puts the buffer back in `batch.data` before the promise settles, so the
   * caller can log from it, retry with it and use it again.
   */
  write(batch: EventBatch): Promise<WriteResult>;
  resume(): Promise<void>;
  flushCounts(): Promise<void>;
  /** Deletes one chunk of events older than the cutoff; resolves to how many (0: done). */
  retentionStep(cutoffMs: number, maxRows: number): Promise<number>;
  close(): Promise<void>;
  /** Why the channel's threads cannot do their work (one died, checkpoints fail), or null. */
  problem?(): string | null;
  /**
   * Set by a channel whose store keeps each event once by key (a cluster's: several writers,
   * batches delivered again): batches then carry `keys` (sender-keys.ts), this run of this
   * instance naming the events that have no position of their own.
   */
  readonly idempotency?: { instance: string };
}

/** Runs requests against a writer; shared by the worker and the inline channel. */
export class WriterHost {
  private failed = false;

  constructor(private readonly writer: EventWriter) {}

  handle(req: Exclude<WriterRequest, { op: "open" }>): unknown {
    switch (req.op) {
      case "write":
        if (this.failed) throw new Error("skipped: an earlier batch failed and must be written first");
        try {
          return { firstId: this.writer.write(req.batch), countsPending: this.writer.countsPending } satisfies WriteResult;
        } catch (e) {
          this.failed = true;
          throw e;
        }
      case "resume":
        this.failed = false;
        return null;
      case "flushCounts":
        if (this.writer.countsPending) this.writer.flushCounts();
        return null;
      case "retention":
        return this.writer.retentionStep(req.cutoffMs, req.maxRows);
      case "close":
        if (this.writer.countsPending) this.writer.flushCounts();
        return null;
    }
  }
}

/** How the writer enriches source addresses (see src/geo), or undefined for not at all. */
export function geoResolver(geo: GeoSources | null) {
  if (!geo) return undefined;
  const g = geoLookup(geo);
  return (ip: string) => g.lookup(ip);
}

export function inlineWriter(db: Db, geo: GeoSources | null = null): WriterChannel {
  const host = new WriterHost(new EventWriter(db, geoResolver(geo)));
  // Asynchronous like the worker, so the pipeline has one code path and a caller never
  // re-enters the pipeline from inside its own submit.
  let chain: Promise<unknown> = Promise.resolve();
  const call = <T>(req: Exclude<WriterRequest, { op: "open" }>) => {
    const p = chain.then(() => host.handle(req) as T);
    chain = p.catch(() => {});
    return p;
  };
  return {
    write: (batch) => call<WriteResult>({ op: "write", batch }),
    resume: () => call<void>({ op: "resume" }),
    flushCounts: () => call<void>({ op: "flushCounts" }),
    retentionStep: (cutoffMs, maxRows) => call<number>({ op: "retention", cutoffMs, maxRows }),
    close: () => call<void>({ op: "close" }),
  };
}

/** `data`: a write's batch data, given back (transferred) whether it committed or not. */
type Reply = ({ rid: number; ok: true; value: unknown } | { rid: number; ok: false; error: string }) & { data?: ArrayBuffer };

/**
 * Checkpoints the WAL in a thread of its own (see checkpointer.ts): one request at a time,
 * and after each commit at most one more. A checkpoint that fails, or the thread's end, is
 * its `problem` (the WAL would grow without end): Core shows it as unhealthy.
 */
function checkpointThread(path: string, log: Logger | undefined) {
  const worker = new Worker(new URL("./checkpointer.ts", import.meta.url).href);
  let running = false;
  let again = false;
  let closing = false;
  let dead = false;
  let problem: string | null = null;
  let whenIdle: (() => void) | null = null;
  const post = (req: CheckpointRequest) => {
    if (dead) return;
    running = true;
    worker.postMessage(req);
  };
  const idle = () => (running ? new Promise<void>((resolve) => (whenIdle = resolve)) : Promise.resolve());
  const failed = (why: string) => {
    if (problem === null) log?.error({ err: why }, "the WAL checkpointer failed: Core is unhealthy and the write-ahead log grows until it works again");
    problem = why;
  };
  const died = (why: string) => {
    if (closing || dead) return;
    dead = true;
    failed(why);
    running = false;
    whenIdle?.();
  };
  worker.onerror = (e) => died(`the WAL checkpointer thread failed: ${e.message}`);
  worker.addEventListener("close", () => died("the WAL checkpointer thread exited"));
  worker.onmessage = (e: MessageEvent<CheckpointReply>) => {
    if (!e.data.ok) failed(`checkpointing the WAL fails: ${e.data.error}`);
    else if (problem !== null && !dead) {
      log?.info("checkpointing the WAL works again");
      problem = null;
    }
    running = false;
    if (whenIdle) {
      const resolve = whenIdle;
      whenIdle = null;
      resolve();
    } else if (again && !closing) {
      again = false;
      post({ op: "checkpoint" });
    }
  };
  post({ op: "open", path });
  return {
    problem: () => problem,
    /** After a commit: checkpoint what the log holds now (once the one under way is done). */
    poke() {
      if (closing) return;
      if (running) again = true;
      else post({ op: "checkpoint" });
    },
    /** Lets a checkpoint under way finish, then closes the thread's connection and the thread. */
    async close(): Promise<void> {
      closing = true;
      await idle();
      post({ op: "close" });
      await idle();
      worker.terminate();
    },
  };
}

export function workerWriter(path: string, log?: Logger, geo: GeoSources | null = null): WriterChannel {
  const worker = new Worker(new URL("./writer-worker.ts", import.meta.url).href);
  const checkpoints = checkpointThread(path, log);
  let nextRid = 0;
  let closing = false;
  /** Why the writer's thread is gone: every call, waiting or new, fails with it. */
  let dead: string | null = null;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; batch?: EventBatch }>();
  const died = (why: string) => {
    if (dead || closing) return;
    dead = why;
    log?.error({ err: why, waiting: waiting.size }, "the event writer thread failed: Core is unhealthy and commits no events");
    for (const w of waiting.values()) w.reject(new Error(why));
    waiting.clear();
  };
  worker.onmessage = (e: MessageEvent<Reply>) => {
    const r = e.data;
    const w = waiting.get(r.rid);
    if (!w) return;
    waiting.delete(r.rid);
    if (r.data && w.batch) w.batch.data = r.data;
    if (r.ok) w.resolve(r.value);
    else w.reject(new Error(r.error));
  };
  worker.onerror = (e) => died(`the event writer thread failed: ${e.message}`);
  worker.addEventListener("close", () => died("the event writer thread exited"));
  const call = <T>(req: WriterRequest) =>
    new Promise<T>((resolve, reject) => {
      if (dead) return reject(new Error(dead));
      const rid = ++nextRid;
      const batch = req.op === "write" ? req.batch : undefined;
      waiting.set(rid, { resolve: resolve as (v: unknown) => void, reject, batch });
      worker.postMessage({ rid, req }, batch ? [batch.data] : []);
    });
  // Opened first; every later request queues behind it in the worker.
  const opened = call<void>({ op: "open", path, autoCheckpoint: false, geo });
  opened.catch(() => {});
  return {
    // The data moves to the writer's thread and comes back with the answer.
    write: async (batch) => {
      const result = await call<WriteResult>({ op: "write", batch });
      checkpoints.poke();
      return result;
    },
    resume: () => call<void>({ op: "resume" }),
    flushCounts: () => call<void>({ op: "flushCounts" }),
    retentionStep: (cutoffMs, maxRows) => call<number>({ op: "retention", cutoffMs, maxRows }),
    close: async () => {
      try {
        await checkpoints.close();
        await call<void>({ op: "close" });
      } finally {
        closing = true;
        worker.terminate();
      }
    },
    problem: () => dead ?? checkpoints.problem(),
  };
}

/** How the pipeline's writer is opened: in a thread of its own (a file database), and with which GeoIP files. */
export interface WriterOptions {
  worker: boolean;
  geo: GeoSources | null;
  logger?: Logger;
}

/** SQLite's event writing: the pipeline starts from its dictionaries and positions, and writes through a thread or inline. */
export function sqliteEventWriting(db: Db, path: string) {
  return {
    ingestStart: () => {
      const q = new EventQueries(db);
      return { dictionaries: q.dictionaries(), spools: q.spoolPositions() };
    },
    openWriter: (o: WriterOptions): WriterChannel => {
      // A worker cannot open the same in-memory database.
      if (!o.worker || path === ":memory:") return inlineWriter(db, o.geo);
      // The checkpointer thread copies the WAL into the database: a commit on this connection
      // must not start a copy of its own.
      db.$client.exec("PRAGMA wal_autocheckpoint = 0");
      return workerWriter(path, o.logger, o.geo);
    },
  };
}
