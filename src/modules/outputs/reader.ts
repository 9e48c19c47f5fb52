/**
 * A reader of the stored events with its own persisted position (docs/outputs.md), the engine
 * behind every output and the alert rules. Like a sink of Vector with its own
 * acknowledgements: it reads committed events in id order from the event store, hands the
 * ones it selects to `deliver`, and moves its position only once `deliver` resolved, so a
 * destination that is down loses nothing and catches up, and a slow one delays only itself
 * (ingest never waits for an output).
 *
 * Several instances on one database share the positions: a reader delivers only while its
 * instance holds the reader's lease (db/output-storage.ts), and reads the position afresh each
 * time it takes it, since another instance may have moved it meanwhile.
 */
import type { CommittedEvents, OutputStorage } from "../../db/output-storage";
import type { Logger } from "../../log";
import { RateLimitedLog } from "../../net/rate-limited-log";
import { backoffMs, type RetryPolicy } from "./backoff";
import type { OutEvent } from "./event";

/** Where committed events come from: the store's (db/output-storage.ts), with geo when it is configured. */
export interface EventSource extends CommittedEvents {
  after(position: number, limit: number): OutEvent[] | Promise<OutEvent[]>;
}

export type PositionStore = Pick<OutputStorage, "position" | "savePosition" | "leases">;

/** standby: another instance delivers (it holds the lease); this one takes over when it is gone. */
export type ReaderState = "idle" | "delivering" | "retrying" | "standby" | "stopped";

export interface ReaderStatus {
  state: ReaderState;
  position: number;
  delivered: number;
  failed: number;
  dropped: number;
  last_error: string | null;
  last_delivery_at: string | null;
}

export interface ReaderOptions {
  /** Key of the persisted position (`output:<name>`, `rules`). */
  key: string;
  source: EventSource;
  positions: PositionStore;
  /** Events per `deliver` call at most. */
  batchSize: number;
  retry: RetryPolicy;
  /** Where a reader without a stored position starts. */
  from: "latest" | "earliest";
  select: (e: OutEvent) => boolean;
  /** True while the reader would take nothing (no alert rules): it moves to the newest event without reading any. */
  skipAll?: () => boolean;
  deliver: (events: OutEvent[]) => Promise<void>;
  /** This instance took the lease (at start, or from another instance). */
  onTake?: () => void;
  /** Counts to go on from (the reader this one replaces: an output edited or resumed). */
  counts?: Pick<ReaderStatus, "delivered" | "failed" | "dropped" | "last_delivery_at">;
  logger: Logger;
}

/** Rows read per query: many, so an output that takes few events (alerts only) skips the rest quickly. */
const READ_ROWS = 1000;
/**
 * The position is written at most this often (and always when the reader stops; one that
 * caught up writes it at its next wake-up, IDLE_POLL_MS at the latest): each write takes
 * SQLite's write lock, which the event writer needs. After a crash (not a clean stop) this
 * much may be delivered again.
 */
const PERSIST_EVERY_MS = 1000;
/**
 * Those writes do not wait for the lock (the event writer holds it nearly all the time under
 * load, and the wait stalled the thread that receives events): one that finds it taken is
 * retried at the next occasion, and only a position this old waits for the lock.
 */
const PERSIST_WAIT_AFTER_MS = 10_000;
/** A wake-up in case a commit notification was missed; commits normally wake readers at once. */
const IDLE_POLL_MS = 5000;
/**
 * How often a holder makes sure it still holds its lease, and a standby instance tries to take
 * it: the longest two instances may both deliver after a holder lost its database connection,
 * and about how long a reader waits after its holder died.
 */
const LEASE_CHECK_MS = 1000;
const LEASE_ERROR = "taking the lease: ";
const READ_RETRY_MS = 5000;

export class StoreReader {
  private pos = 0;
  private persisted = 0;
  /** When the position was last written or tried (for PERSIST_EVERY_MS), and last written. */
  private persistedAt = 0;
  private savedAt = Date.now();
  private readonly counts = { delivered: 0, failed: 0, dropped: 0 };
  private lastError: string | null = null;
  private lastDeliveryAt: number | null = null;
  private state: ReaderState = "idle";
  private stopped = false;
  /** Ends the current sleep; `idle` tells whether a commit may end it (a backoff waits for its time). */
  private wake: (() => void) | null = null;
  private idle = false;
  private loop: Promise<void> | null = null;
  private readonly warn: RateLimitedLog;
  /** Rejects when the reader stops, so a delivery stuck connecting does not hold up a shutdown. */
  private readonly stopping = Promise.withResolvers<never>();
  /** Whether this instance holds the lease, and when that was last made sure of. */
  private holding = false;
  private leaseCheckedAt = 0;
  /** Another instance held the lease at some point: taking it is a take-over worth a log line. */
  private stoodBy = false;

  constructor(private readonly o: ReaderOptions) {
    if (o.counts) {
      const { delivered, failed, dropped, last_delivery_at } = o.counts;
      Object.assign(this.counts, { delivered, failed, dropped });
      this.lastDeliveryAt = last_delivery_at === null ? null : Date.parse(last_delivery_at);
    }
    this.stopping.promise.catch(() => {});
    this.warn = new RateLimitedLog(o.logger, 3, 60_000);
  }

  /** Stores where a new reader starts, unless it has a position: so events committed before it first reads are not skipped. */
  static async pin(positions: PositionStore, source: EventSource, key: string, from: "latest" | "earliest"): Promise<void> {
    if ((await positions.position(key)) !== null) return;
    await positions.savePosition(key, from === "earliest" ? 0 : await source.lastId(), true);
  }

  get position(): number {
    return this.pos;
  }

  start(): void {
    this.loop ??= this.run().catch((e) => {
      this.o.logger.error({ err: e }, "reader stopped by an error");
      this.state = "stopped";
    });
  }

  /** New events were committed. */
  notify(): void {
    if (this.idle) this.wake?.();
  }

  /**
   * Stops after the delivery in progress (or at once when `abort` makes it fail); the position
   * is saved (unless `save` is false: the reader was removed, its position with it) and the lease let go.
   */
  async stop(abort?: () => Promise<void>, save = true): Promise<void> {
    this.stopped = true;
    this.stopping.reject(new Error("output stopped"));
    this.wake?.();
    await abort?.();
    await this.loop;
    this.state = "stopped";
    if (!this.holding) return;
    if (save) await this.save(true);
    this.holding = false;
    try {
      await this.o.positions.leases.release(this.o.key);
    } catch {
      // Let go with the connection anyway when Core stops.
    }
  }

  status(): ReaderStatus {
    return {
      state: this.state,
      position: this.pos,
      ...this.counts,
      last_error: this.lastError,
      last_delivery_at: this.lastDeliveryAt === null ? null : new Date(this.lastDeliveryAt).toISOString(),
    };
  }

  private sleep(ms: number, idle: boolean): Promise<void> {
    this.idle = idle;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        this.idle = false;
        done();
      };
    });
  }

  /** Writes the position; `wait` false gives up when the write lock is taken (unless the saved one is old). */
  private async save(wait = false): Promise<void> {
    if (this.persisted === this.pos || !this.holding) return;
    const pos = this.pos;
    try {
      const mustWait = wait || Date.now() - this.savedAt >= PERSIST_WAIT_AFTER_MS;
      if (!(await this.o.positions.savePosition(this.o.key, pos, mustWait))) {
        this.persistedAt = Date.now();
        return;
      }
      this.persisted = pos;
      this.savedAt = Date.now();
    } catch (e) {
      // The position stays in memory and is written next time; a crash meanwhile repeats deliveries, never skips them.
      this.warn.warn(`${this.o.key}:save`, { err: (e as Error).message }, "cannot save the position");
    }
    this.persistedAt = Date.now();
  }

  /** Whether this instance may deliver now: takes or confirms the lease, at most every LEASE_CHECK_MS while held. */
  private async lease(): Promise<boolean> {
    if (this.holding && Date.now() - this.leaseCheckedAt < LEASE_CHECK_MS) return true;
    const { positions, key } = this.o;
    try {
      const held = await positions.leases.take(key);
      this.leaseCheckedAt = Date.now();
      if (this.lastError?.startsWith(LEASE_ERROR)) this.lastError = null;
      if (held && !this.holding) {
        const stored = await positions.position(key);
        this.pos = stored ?? (this.o.from === "earliest" ? 0 : await this.o.source.lastId());
        if (stored === null) await positions.savePosition(key, this.pos, true);
        this.persisted = this.pos;
        this.holding = true;
        if (this.stoodBy) this.o.logger.info({ position: this.pos }, "this instance delivers now (it took the lease over)");
        this.o.onTake?.();
      } else if (!held) {
        if (this.holding) this.o.logger.warn("another instance delivers now (this one lost its lease)");
        this.holding = false;
        this.stoodBy = true;
        // What the holder has saved, for this instance's status.
        this.pos = (await positions.position(key)) ?? this.pos;
      }
      return held;
    } catch (e) {
      // Not knowing is not holding: another instance may have it by now.
      this.holding = false;
      this.lastError = `${LEASE_ERROR}${(e as Error).message}`;
      this.warn.warn(`${key}:lease`, { err: this.lastError }, "cannot take the reader's lease; retrying");
      return false;
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      if (!(await this.lease())) {
        if (this.stopped) return;
        this.state = "standby";
        await this.sleep(LEASE_CHECK_MS, false);
        continue;
      }
      let rows: OutEvent[];
      try {
        if (this.o.skipAll?.()) {
          this.pos = Math.max(this.pos, await this.o.source.lastId());
          rows = [];
        } else {
          rows = await this.o.source.after(this.pos, READ_ROWS);
        }
      } catch (e) {
        // A database that cannot be read now (locked, damaged, a server away) is retried like a
        // destination, though no longer apart than READ_RETRY_MS: a database server that was
        // away a few seconds should not hold an output up for a minute more.
        this.lastError = `reading events: ${(e as Error).message}`;
        this.warn.warn(`${this.o.key}:read`, { err: this.lastError }, "cannot read events; retrying");
        await this.sleep(Math.min(this.o.retry.maxMs, READ_RETRY_MS), false);
        continue;
      }
      if (rows.length === 0) {
        // Caught up. Not at every commit (a reader that takes nothing is woken by each): the
        // write lock it takes is the event writer's, which then waits for it.
        if (Date.now() - this.persistedAt >= PERSIST_EVERY_MS) await this.save();
        this.state = "idle";
        await this.sleep(IDLE_POLL_MS, true);
        continue;
      }
      const picked = rows.filter(this.o.select);
      let lost = false;
      for (let i = 0; i < picked.length && !this.stopped; i += this.o.batchSize) {
        const batch = picked.slice(i, i + this.o.batchSize);
        const done = await this.deliver(batch);
        if (done === "stopped") return;
        if (done === "lost") {
          lost = true;
          break;
        }
        this.pos = batch[batch.length - 1]!.id;
        if (Date.now() - this.persistedAt >= PERSIST_EVERY_MS) await this.save();
      }
      if (this.stopped) return;
      if (lost) continue;
      this.pos = rows[rows.length - 1]!.id;
      // A backlog read and written without waiting (a file, skipped events) would otherwise keep
      // the event loop, and with it the sockets that receive events, to itself until caught up.
      await new Promise((resolve) => setImmediate(resolve));
      if (Date.now() - this.persistedAt >= PERSIST_EVERY_MS) await this.save();
    }
  }

  /**
   * Delivers one batch, retrying with backoff; "stopped" when the reader stopped meanwhile,
   * "lost" when another instance took the lease during the retries (it delivers from its position).
   */
  private async deliver(batch: OutEvent[]): Promise<"done" | "stopped" | "lost"> {
    const { retry } = this.o;
    for (let attempt = 1; ; attempt++) {
      if (this.stopped) return "stopped";
      if (attempt > 1 && !(await this.lease())) return this.stopped ? "stopped" : "lost";
      this.state = attempt === 1 ? "delivering" : "retrying";
      try {
        await Promise.race([this.o.deliver(batch), this.stopping.promise]);
        this.counts.delivered += batch.length;
        this.lastDeliveryAt = Date.now();
        if (this.lastError !== null) this.o.logger.info({ events: batch.length }, "delivering works again");
        this.lastError = null;
        return "done";
      } catch (e) {
        if (this.stopped) return "stopped";
        this.counts.failed++;
        this.lastError = e instanceof Error ? e.message : String(e);
        const giveUp = retry.maxAttempts > 0 && attempt >= retry.maxAttempts;
        this.warn.warn(this.o.key, { err: this.lastError, attempt, events: batch.length, first_id: batch[0]!.id, dropped: giveUp }, giveUp ? "delivery failed; batch dropped" : "delivery failed; retrying");
        if (giveUp) {
          this.counts.dropped += batch.length;
          return "done";
        }
        this.state = "retrying";
        await this.sleep(backoffMs(attempt, retry), false);
      }
    }
  }
}
