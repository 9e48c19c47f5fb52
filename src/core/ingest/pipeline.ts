/**
 * The event pipeline on the receiving thread: normalised events → in-memory batch → writer
 * (one transaction per batch) → after commit: live feed, log line, acknowledgements.
 *
 * Batches are columns (see `EventBatch`), sealed at `batch_size` events, `batch_delay_ms`
 * after their first event, or as soon as the writer has room. At most two are at the writer,
 * so it starts the next as soon as one commits; they commit in order (ids, acks), also when a
 * write fails and is retried. `pending` (received, not yet committed) is the
 * memory bound: at `max_pending_events`, or at `max_pending_bytes` of their data, the pipeline
 * reports overload and the event socket stops reading until half of both has been committed.
 * The count alone let a flood of large messages hold 49,152 of them, up to 1 MiB each; the
 * bytes also seal a batch (a third of them), so three batches fit as three of the count do.
 */
import type { CoreConfig } from "../../config";
import type { SourceEntry, TypeEntry } from "../../db/event-store";
import type { Geo } from "../../geo";
import { eventLog, mayNeedEscaping, type EventLogger, type Logger } from "../../log";
import { RateLimitedLog } from "../../net/rate-limited-log";
import type { MessageBus } from "../bus";
import { logBatch, publishBatch, typeCounts } from "./batch-out";
import { newBatch, reserve, spoolPositions, storageOf, toWire, type Batch, type Storage } from "./batch";
import { BatchSources, newestOf, type PotSighting } from "./batch-sources";
import { Dictionaries } from "./dictionaries";
import { RetentionSweep } from "./retention";
import { fromNodeEvent, normalise, parseData, toIngestEvent, type IngestEvent } from "./normalise";
import { SenderKeys } from "./sender-keys";
import { dataBytes, dataText, writeData, type ScannedLine } from "./scan";
import type { Ingest, IngestCounters, IngestSource, StreamTag } from "./types";
import type { WriteResult, WriterChannel } from "../../db/writer-channel";

export interface PipelineOptions {
  config: Pick<CoreConfig, "batch_size" | "batch_delay_ms" | "max_pending_events" | "max_pending_bytes" | "log_events" | "stats_flush_ms" | "retention_days" | "commit_stall_ms">;
  writer: WriterChannel;
  bus: MessageBus;
  logger: Logger;
  nodeOfPot(potId: string): bigint | null;
  potTypeOf?(nodeId: bigint | null, potId: string): string | null;
  dictionaries: { sources: SourceEntry[]; types: TypeEntry[] };
  /** Committed spool positions stored by earlier runs. */
  spools?: Map<string, number>;
  /** Test hook: awaited before each batch goes to the writer, to stall it. */
  writerGate?: () => Promise<void>;
  /** Pause before re-sending batches whose write failed (a full disk, a locked database). */
  retryMs?: number;
  /** The country and network of a source address, for the live feed's `geo` (src/geo, cached per address). */
  enrich?: (ip: string) => Geo | undefined;
  /**
   * Told of each committed batch (`GET /metrics`): its size, the seconds from its first event's
   * arrival to the commit, and its events per event type.
   */
  onBatchCommitted?: (events: number, lagSeconds: number, byType: Map<string, number>) => void;
  /** Told of each rejected line or message, by error code. */
  onReject?: (code: string) => void;
  /** Told of each committed batch's distinct sources, before its acknowledgements (the registry's External pots). */
  onSources?: (sightings: PotSighting[], newest: (s: PotSighting) => number) => void;
}

const MAX_IN_FLIGHT = 2;
const DAY_MS = 86_400_000;
/** Enough for the batches in flight: in the steady state one waits here for the next batch. */
const SPARE_STORAGE = MAX_IN_FLIGHT;

export class EventPipeline implements Ingest {
  readonly counters: IngestCounters = { received: 0, committed: 0, rejected: 0, connections: 0, pending: 0, duplicates: 0, unreadable_timestamps: 0 };
  version = 0;
  /** Last committed spool position per node spool, loaded at start and moved by each commit. */
  private readonly spools: Map<string, number>;
  private readonly log: Logger;
  /** Writes an event's log line; null when the event log is off. */
  private readonly eventLine: EventLogger | null;
  private readonly warn: RateLimitedLog;
  private readonly cfg: PipelineOptions["config"];
  readonly maxEventAgeMs: number;

  private readonly dict: Dictionaries;
  private readonly sources = new BatchSources();
  /** Only when the writer keeps each event once by key (a cluster's ingest instance). */
  private readonly keys: SenderKeys | null;

  private current: Batch | null = null;
  /** Bytes to allocate for the next batch's data: what the last one needed, so it rarely grows. */
  private dataHint = 64 * 1024;
  /** Storage of committed batches, for the next ones (at most SPARE_STORAGE). */
  private readonly spare: Storage[] = [];
  private readonly sealed: Batch[] = [];
  private inFlight = 0;
  private batchSeq = 0;
  private committedSeq = 0;
  private delayTimer: ReturnType<typeof setTimeout> | null = null;
  /** A write failed: nothing goes to the writer until the failed batches are re-sent. */
  private retrying = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private failedBatches: Batch[] = [];
  /** Why the last write failed, until one succeeds: Core is unhealthy meanwhile (`/health`). */
  private writeError: string | null = null;
  /** Since when events have waited with no commit (performance.now()); null while none waits. */
  private waitingSince: number | null = null;
  /** Shutdown gave up on what was not committed yet (see `abandon`). */
  private abandoned = false;
  private readonly flushWaiters: { seq: number; resolve(): void }[] = [];

  private overloaded = false;
  /** Bytes of data of the events received and not yet committed (bounded by `max_pending_bytes`). */
  private pendingData = 0;
  /** A batch's data past this is sealed: with two at the writer, three fit in `max_pending_bytes`. */
  private readonly batchBytes: number;
  private readonly pressureListeners = new Set<(overloaded: boolean) => void>();
  private readonly commitListeners = new Set<(lastId: number) => void>();

  private countsTimer: ReturnType<typeof setTimeout> | null = null;
  /** Batches handed to the writer so far; the writer answers requests in order. */
  private writesSent = 0;
  /** A counters flush asked for by a reader, and `writesSent` when it was asked for. */
  private countsFlush: { after: number; done: Promise<void> } | null = null;
  private readonly retention: RetentionSweep | null = null;
  private stopping: Promise<void> | null = null;

  constructor(private readonly opts: PipelineOptions) {
    this.spools = new Map(opts.spools ?? []);
    this.cfg = opts.config;
    this.maxEventAgeMs = this.cfg.retention_days * DAY_MS;
    this.batchBytes = Math.floor(this.cfg.max_pending_bytes / (MAX_IN_FLIGHT + 1));
    this.log = opts.logger;
    this.eventLine = this.cfg.log_events ? eventLog(opts.logger, parseData) : null;
    this.warn = new RateLimitedLog(opts.logger);
    this.dict = new Dictionaries(opts.dictionaries);
    this.keys = opts.writer.idempotency ? new SenderKeys(opts.writer.idempotency.instance) : null;
    if (this.cfg.retention_days > 0) this.retention = new RetentionSweep(this.cfg.retention_days, opts.writer, this.log, this.warn, () => this.version++);
  }

  // ---- Ingest ----------------------------------------------------------------------------

  submit(obj: unknown, source: IngestSource): string | null {
    // A proven sender (the control channel's registered node) owns its events, whatever they say.
    const nodeId = source.nodeId ?? null;
    const r = normalise(obj, { receivedAt: Date.now(), maxAgeMs: this.maxEventAgeMs, nodeId, nodeProven: nodeId !== null, nodeOfPot: this.opts.nodeOfPot, potTypeOf: this.opts.potTypeOf });
    if (!r.ok) {
      this.reject(null, source.remote, "invalid_event", r.error);
      return r.error;
    }
    this.enqueue(toIngestEvent(r.event), null);
    return null;
  }

  submitNodeEvent(nodeId: bigint, payload: unknown, _source: IngestSource): void {
    this.enqueue(toIngestEvent(fromNodeEvent(nodeId, payload, Date.now())), null);
  }

  flush(): Promise<void> {
    if (this.current) this.seal();
    const seq = this.batchSeq;
    if (this.committedSeq >= seq || this.abandoned) return Promise.resolve();
    return new Promise((resolve) => this.flushWaiters.push({ seq, resolve }));
  }

  stop(): Promise<void> {
    return (this.stopping ??= this.shutdown());
  }

  /**
   * The writer counts each batch in memory when it commits it and writes the counters every
   * `stats_flush_ms` (one upsert per key, cheap in bulk). A reader who must see every
   * committed event counted asks for a flush: queued behind the batches already sent, it
   * covers every event committed before the call. Readers arriving together share one.
   */
  countsSettled(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const f = this.countsFlush;
    if (f && f.after === this.writesSent) return f.done;
    const done = this.opts.writer.flushCounts().catch((e) => {
      this.warn.warn("counts-failed", { err: (e as Error).message }, "writing the event counters failed; they are recounted at the next start");
    });
    const mine = { after: this.writesSent, done };
    this.countsFlush = mine;
    void done.then(() => {
      if (this.countsFlush === mine) this.countsFlush = null;
    });
    return done;
  }

  nodeOfPot(potId: string): bigint | null {
    return this.opts.nodeOfPot(potId);
  }

  potTypeOf(nodeId: bigint | null, potId: string): string | null {
    return this.opts.potTypeOf?.(nodeId, potId) ?? null;
  }

  problem(): string | null {
    // Asked on every GET /health: the healthy answer allocates nothing.
    const writer = this.opts.writer.problem?.() ?? null;
    if (this.writeError === null) {
      // A writer that hangs (a stalled disk, a server that does not answer) fails no write.
      const waited = this.waitingSince === null ? 0 : performance.now() - this.waitingSince;
      if (waited < this.cfg.commit_stall_ms) return writer;
      const stalled = `no events committed for ${Math.round(waited / 100) / 10} s while ${this.counters.pending} events wait (received, not committed)`;
      return writer === null ? stalled : `${stalled}; ${writer}`;
    }
    const failing = `committing events fails: ${this.writeError}; ${this.counters.pending} events wait (received, not acknowledged)`;
    return writer === null ? failing : `${failing}; ${writer}`;
  }

  /**
   * Shutdown's time is up (`shutdown_timeout_ms`): stop retrying and let `flush` and `stop`
   * return. What is not committed is never acknowledged, so nodes keep it in their spools and
   * send it again; `stop` then fails, saying how many events that is.
   */
  abandon(): void {
    if (this.counters.pending === 0 || this.abandoned) return;
    this.abandoned = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.delayTimer) clearTimeout(this.delayTimer);
    this.retryTimer = this.delayTimer = null;
    for (const w of this.flushWaiters.splice(0)) w.resolve();
  }

  /** True while the writer is too far behind: stop reading until it reports relief. */
  get isOverloaded(): boolean {
    return this.overloaded;
  }

  get pendingBytes(): number {
    return this.pendingData;
  }

  get isContended(): boolean {
    return this.counters.pending >= Math.floor(this.cfg.max_pending_events / 2) || this.pendingData >= Math.floor(this.cfg.max_pending_bytes / 2);
  }

  onCommit(listener: (lastId: number) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  onPressure(listener: (overloaded: boolean) => void): () => void {
    this.pressureListeners.add(listener);
    return () => this.pressureListeners.delete(listener);
  }

  // ---- Receiving -------------------------------------------------------------------------

  /**
   * Takes one normalised event; `tag` is its stream when it came from an acknowledged socket.
   * An event of the fast path (`text` null) comes with its scan, and, when the line is ASCII,
   * the bytes it was read from (`bytes[at...]`), valid only during this call.
   */
  enqueue(ev: IngestEvent, tag: StreamTag | null, scan?: ScannedLine, bytes?: Uint8Array, at = -1): void {
    this.counters.received++;
    if (ev.unreadableTimestamp) this.counters.unreadable_timestamps++;
    const b = (this.current ??= this.newBatch());
    const i = b.n++;
    b.ts[i] = ev.ts;
    b.sourceId[i] = this.dict.sourceIdOf(ev, b.newSources);
    b.typeId[i] = this.dict.typeIdOf(ev.event_type, b.newTypes);
    b.ips.push(ev.src_ip ?? "");
    if (this.keys !== null) this.keys.write(b.keyWords!, i, tag);
    const before = b.dataLen;
    if (ev.text === null && at >= 0) {
      reserve(b, dataBytes(scan!));
      b.dataLen = writeData(scan!, bytes!, at, b.dataBuf, b.dataLen);
    } else {
      ev.text ??= dataText(scan!);
      reserve(b, ev.text.length * 3);
      b.dataLen += b.dataBuf.write(ev.text, b.dataLen);
    }
    b.dataEnds[i] = b.dataLen;
    this.pendingData += b.dataLen - before;
    if (this.eventLine !== null && !b.escape && mayNeedEscaping(ev.text ?? scan!.line)) b.escape = true;
    if (ev.username !== null) b.users.count(ev.ts, ev.username);
    if (ev.password !== null) b.passwords.count(ev.ts, ev.password);
    if (tag && !b.tags.has(tag)) {
      b.tags.set(tag, 0);
      tag.outstanding++;
    }
    if (this.counters.pending++ === 0) this.waitingSince = performance.now();
    if (!this.overloaded && (this.counters.pending >= this.cfg.max_pending_events || this.pendingData >= this.cfg.max_pending_bytes)) this.setOverloaded(true);
    if (b.n >= this.cfg.batch_size || b.dataLen >= this.batchBytes) this.seal();
    else if (!this.delayTimer) this.scheduleSeal(this.cfg.batch_delay_ms);
  }

  /** Counts and logs a line or message that is not an event; the stream goes on. */
  reject(tag: StreamTag | null, remote: string, code: string, message: string): void {
    this.counters.received++;
    this.counters.rejected++;
    this.opts.onReject?.(code);
    this.warn.warn(`${remote}:${code}`, { remote, code }, `skipped input that is not an event: ${message}`);
    if (tag && tag.outstanding === 0) tag.settled(tag.lineNo);
  }

  spoolCommitted(key: string): number {
    return this.spools.get(key) ?? 0;
  }

  skipDuplicate(tag: StreamTag): void {
    this.counters.duplicates++;
    if (tag.outstanding === 0) tag.settled(tag.lineNo);
  }

  private scheduleSeal(ms: number): void {
    if (this.delayTimer) return;
    this.delayTimer = setTimeout(() => {
      this.delayTimer = null;
      if (this.current) this.seal();
    }, ms);
  }

  private newBatch(): Batch {
    return newBatch(this.cfg.batch_size, this.dataHint, this.spare.pop(), this.keys !== null);
  }

  // ---- Writing ---------------------------------------------------------------------------

  private seal(): void {
    const b = this.current;
    if (!b || b.n === 0) return;
    this.current = null;
    if (this.delayTimer) {
      clearTimeout(this.delayTimer);
      this.delayTimer = null;
    }
    b.seq = ++this.batchSeq;
    this.dataHint = Math.max(4096, Math.ceil(b.dataLen * 1.25));
    for (const tag of b.tags.keys()) b.tags.set(tag, tag.lineNo);
    this.sealed.push(b);
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.sealed.length > 0 && !this.retrying && !this.abandoned) {
      const b = this.sealed.shift()!;
      this.inFlight++;
      void this.send(b);
    }
  }

  private async send(b: Batch): Promise<void> {
    if (this.opts.writerGate) await this.opts.writerGate();
    let result: WriteResult;
    const wire = toWire(b);
    try {
      const written = this.opts.writer.write(wire);
      this.writesSent++;
      result = await written;
    } catch (e) {
      b.dataBuf = Buffer.from(wire.data);
      this.writeFailed(b, (e as Error).message);
      return;
    }
    // A writer in another thread took the data and gave it back (WriterChannel.write).
    b.dataBuf = Buffer.from(wire.data);
    this.committed(b, result.firstId, result.countsPending);
    if (this.spare.length < SPARE_STORAGE && b.dataBuf.length > 0) {
      this.spare.push(storageOf(b));
    }
  }

  /**
   * Nothing of a failed batch was committed (one transaction), and the writer refuses later
   * batches until resumed. Once every batch in flight is back, they are all re-sent, in order,
   * after a pause; input stays paused meanwhile because pending stays high. Core reports itself
   * unhealthy until a write succeeds. Only a shutdown gives up (`abandon`), and then nothing
   * of the failed batches is acknowledged.
   */
  private writeFailed(b: Batch, message: string): void {
    this.inFlight--;
    b.attempts++;
    if (!message.startsWith("skipped:")) {
      if (this.writeError === null) this.log.error({ err: message, events: b.n }, "committing events failed: Core is unhealthy until a commit succeeds; retrying");
      else this.warn.warn("write-failed", { err: message, events: b.n, attempt: b.attempts }, "committing a batch of events failed; retrying");
      this.writeError = message;
    }
    this.retrying = true;
    this.failedBatches.push(b);
    if (this.inFlight > 0 || this.abandoned) return;
    const again = this.failedBatches.sort((x, y) => x.seq - y.seq);
    this.failedBatches = [];
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.sealed.unshift(...again);
      // A rejected resume must not become an unhandled rejection: the next write is retried alike.
      this.opts.writer
        .resume()
        .catch((e) => this.warn.warn("resume-failed", { err: (e as Error).message }, "resuming the event writer failed; retrying"))
        .finally(() => {
          this.retrying = false;
          this.pump();
        });
    }, this.opts.retryMs ?? 1000);
  }

  /**
   * `firstId` null: the writer gave no ids (a cluster's ingest instance, whose batches are
   * stored in JetStream and committed to PostgreSQL by a writer instance, which publishes
   * them on the live feed). Then no local feed publish and no commit listeners, and the log
   * lines carry `"id":null`; the acknowledgements to senders are the same.
   */
  private committed(b: Batch, firstId: number | null, countsPending: boolean): void {
    this.inFlight--;
    if (this.writeError !== null) {
      this.log.info({ events: b.n }, "committing events works again");
      this.writeError = null;
    }
    this.committedSeq = Math.max(this.committedSeq, b.seq);
    this.counters.pending -= b.n;
    this.pendingData -= b.dataLen;
    this.waitingSince = this.counters.pending > 0 ? performance.now() : null;
    this.counters.committed += b.n;
    this.version++;
    if (this.opts.onBatchCommitted) this.opts.onBatchCommitted(b.n, (performance.now() - b.startedAt) / 1000, typeCounts(b, this.dict));
    if (this.eventLine) logBatch(b, firstId, this.dict, this.eventLine);
    if (firstId !== null && this.opts.bus.wants("PotEvent")) publishBatch(b, firstId, this.dict, this.opts.bus, this.opts.enrich);
    for (const [key, pos] of spoolPositions(b)) if (pos > (this.spools.get(key) ?? 0)) this.spools.set(key, pos);
    // Before the acks: a sender that waited for its ack finds the pot registered.
    if (this.opts.onSources) this.opts.onSources(this.sources.of(b, this.dict), (s) => newestOf(b, s.sourceId));
    if (firstId !== null) for (const l of this.commitListeners) l(firstId + b.n - 1);
    for (const [tag, line] of b.tags) {
      tag.outstanding--;
      // With nothing of the stream left in flight, every line it sent so far is settled
      // (later ones were rejected), so the ack can cover them too.
      tag.settled(tag.outstanding === 0 ? tag.lineNo : line);
    }
    if (this.overloaded && this.counters.pending <= this.cfg.max_pending_events / 2 && this.pendingData <= this.cfg.max_pending_bytes / 2) this.setOverloaded(false);
    while (this.flushWaiters.length > 0 && this.flushWaiters[0]!.seq <= this.committedSeq) this.flushWaiters.shift()!.resolve();
    if (countsPending) this.scheduleCountsFlush();
    // The writer has room: whatever accumulated meanwhile goes now rather than after the delay.
    if (this.sealed.length === 0 && this.current && this.inFlight < MAX_IN_FLIGHT) this.seal();
    this.pump();
  }

  private setOverloaded(on: boolean): void {
    this.overloaded = on;
    for (const l of this.pressureListeners) l(on);
  }

  private scheduleCountsFlush(): void {
    if (this.countsTimer || this.stopping) return;
    this.countsTimer = setTimeout(() => {
      this.countsTimer = null;
      this.opts.writer.flushCounts().catch((e) => this.warn.warn("counts-failed", { err: (e as Error).message }, "writing the event counters failed; they are recounted at the next start"));
    }, this.cfg.stats_flush_ms);
  }

  private async shutdown(): Promise<void> {
    this.retention?.stop();
    await this.flush();
    if (this.countsTimer) clearTimeout(this.countsTimer);
    this.countsTimer = null;
    if (!this.abandoned) {
      this.log.debug({ batches: this.batchSeq, committed: this.counters.committed }, "event pipeline drained");
      await this.opts.writer.close();
      return;
    }
    const lost = this.counters.pending;
    const why = this.writeError ?? this.opts.writer.problem?.() ?? "the writer did not finish in time";
    const message =
      `${lost} received events were not committed (${why}). None of them was acknowledged: nodes keep them in their spools and send them again ` +
      "when Core is back; senders that do not wait for acknowledgements (a honeypot writing to the event socket directly) have lost them";
    this.log.error({ events: lost, err: why }, message);
    // A writer that cannot write may not be able to close either; it does not hold up the exit.
    await Promise.race([this.opts.writer.close().catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
    throw new Error(message);
  }
}
