/**
 * Writes that Core's synchronous paths hand to PostgreSQL (the registry, command records): run
 * one at a time in the order given (a status set after a registration lands after it).
 *
 * A write that fails because the server cannot be reached is tried again, with a growing
 * pause, until it is stored; the writes behind it wait, so the order holds. REST had answered
 * 202 for a command issued while PostgreSQL was away, and the record was then lost for good.
 * Each write must be idempotent (an insert that may have reached the server before its
 * connection broke is tried again): the stores write upserts and conditional updates.
 * A write the server refuses (a constraint, a bad value) would fail forever: it is reported
 * and dropped, as before.
 */
import { databaseUnreachable } from "./unreachable";

/** Pauses between tries of a write while the server is away: from 100 ms, doubling, up to 5 s. */
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

interface Write {
  what: string;
  write: () => Promise<unknown>;
}

export interface WriteQueueEvents {
  /** A write the server refused: dropped. */
  onError(e: Error, what: string): void;
  /** The server is away: writes wait (once per outage). */
  onStall?(e: Error, waiting: number): void;
  /** The server took a write again; `waiting` more follow (once per outage). */
  onResume?(waiting: number, afterMs: number): void;
}

export class WriteQueue {
  private readonly pending: Write[] = [];
  private running = false;
  private closed = false;
  /** Set while the write at the head fails because the server is away. */
  private away: { error: Error; since: number } | null = null;
  private idle: PromiseWithResolvers<void> | null = null;
  private readers: PromiseWithResolvers<void>[] = [];
  private readonly events: WriteQueueEvents;

  constructor(events: WriteQueueEvents | ((e: Error, what: string) => void)) {
    this.events = typeof events === "function" ? { onError: events } : events;
  }

  push(what: string, write: () => Promise<unknown>): void {
    this.pending.push({ what, write });
    void this.pump();
  }

  /** Writes queued and not stored yet. */
  get waiting(): number {
    return this.pending.length;
  }

  /** Resolves once everything queued so far is stored (or dropped). */
  settled(): Promise<void> {
    if (!this.pending.length) return Promise.resolve();
    this.idle ??= Promise.withResolvers<void>();
    return this.idle.promise;
  }

  /**
   * For a read that must see this instance's writes: resolves once they are stored, and
   * rejects with the server's error as soon as it is known to be away (the read answers 503
   * now rather than wait for the outage to end).
   */
  fresh(): Promise<void> {
    if (!this.pending.length) return Promise.resolve();
    if (this.away) return Promise.reject(this.away.error);
    const r = Promise.withResolvers<void>();
    this.readers.push(r);
    return r.promise;
  }

  /**
   * Waits at most `ms` for the queued writes, then stops trying; resolves with how many were
   * not stored (Core's stop must not hang on a server that is gone).
   */
  async close(ms: number): Promise<number> {
    let timer: Timer | undefined;
    await Promise.race([this.settled(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.closed = true;
    return this.pending.length;
  }

  private async pump(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let pause = RETRY_MIN_MS;
    while (this.pending.length && !this.closed) {
      const head = this.pending[0]!;
      try {
        await head.write();
      } catch (e) {
        const err = e as Error;
        const unreachable = databaseUnreachable(err);
        if (unreachable) {
          if (!this.away) {
            this.away = { error: unreachable, since: Date.now() };
            this.events.onStall?.(unreachable, this.pending.length);
          }
          for (const r of this.readers.splice(0)) r.reject(unreachable);
          await Bun.sleep(pause);
          pause = Math.min(RETRY_MAX_MS, pause * 2);
          continue;
        }
        this.events.onError(err, head.what);
      }
      this.pending.shift();
      pause = RETRY_MIN_MS;
      if (this.away) {
        this.events.onResume?.(this.pending.length, Date.now() - this.away.since);
        this.away = null;
      }
    }
    this.running = false;
    if (!this.pending.length) {
      this.idle?.resolve();
      this.idle = null;
      for (const r of this.readers.splice(0)) r.resolve();
    }
  }
}
