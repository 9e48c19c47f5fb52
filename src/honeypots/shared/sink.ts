/**
 * Where a honeypot's events go: one JSON line each, appended to `<log_path>/<kind>.json` and sent
 * over TCP to the node's NDJSON relay (which never writes back).
 *
 * The file is written synchronously so that an event is on disk before anything else happens; a
 * honeypot's event rate is bounded by its attackers' round trips, far below what the disk takes.
 * The relay side is best effort with a bounded memory: when the relay is away the queue keeps the
 * newest events and counts the ones it drops, and a batch cut by a lost connection is resent from
 * its first incomplete line (the relay discards a line without its newline).
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { Socket } from "bun";
import type { Logger } from "pino";
import { stringify } from "../../protocol/json.ts";
import { isoMicro } from "./time.ts";

export type PotEvent = { eventid: string } & Record<string, unknown>;

export interface SinkOptions {
  file: string;
  relay: { host: string; port: number } | null;
  identity: { node_id: bigint | null; pot_id: string; pot_type: string };
  logger: Logger;
  /** Bounds of the relay queue while the relay is unreachable. */
  maxQueuedEvents?: number;
  maxQueuedChars?: number;
}

const BACKOFF_FIRST_MS = 200;
const BACKOFF_MAX_MS = 10_000;
/** Lines joined into one write: fewer syscalls under a flood, still small enough to resend. */
const BATCH_LINES = 256;

interface Batch {
  bytes: Buffer;
  /** Byte offset of the end of each line, to resume at a line boundary after a lost connection. */
  ends: number[];
  written: number;
}

export class EventSink {
  private readonly fd: number;
  private readonly identity: Record<string, unknown>;
  private readonly maxEvents: number;
  private readonly maxChars: number;
  private queue: string[] = [];
  private head = 0;
  private queuedChars = 0;
  private batch: Batch | null = null;
  private socket: Socket | null = null;
  private connecting = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private backoff = BACKOFF_FIRST_MS;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private fileErrors = 0;
  /** Events dropped from the relay queue (they are still in the file). */
  dropped = 0;

  constructor(private readonly opts: SinkOptions) {
    mkdirSync(dirname(opts.file), { recursive: true });
    this.fd = openSync(opts.file, "a");
    const { node_id, pot_id, pot_type } = opts.identity;
    this.identity = node_id === null ? { pot_id, pot_type } : { pot_id, pot_type, node_id };
    this.maxEvents = opts.maxQueuedEvents ?? 10_000;
    this.maxChars = opts.maxQueuedChars ?? 8 * 1024 * 1024;
    if (opts.relay) this.connect();
  }

  /** Stamps `timestamp` (unless given) and the pot's identity, then records the event. */
  emit(event: PotEvent): void {
    if (this.closed) return;
    const line = `${stringify({ ...event, timestamp: event.timestamp ?? isoMicro(), ...this.identity })}\n`;
    this.writeFile(line);
    if (!this.opts.relay) return;
    this.enqueue(line);
    this.pump();
  }

  /** Waits (at most `timeoutMs`) for the relay queue to drain, then closes the file and socket. */
  async close(timeoutMs = 3000): Promise<void> {
    if (this.closed) return;
    if (this.opts.relay && this.pending()) {
      if (this.retryTimer) {
        clearTimeout(this.retryTimer);
        this.retryTimer = null;
        this.connect();
      }
      const { promise, resolve } = Promise.withResolvers<void>();
      this.idleWaiters.push(resolve);
      const timer = setTimeout(resolve, timeoutMs);
      await promise;
      clearTimeout(timer);
    }
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const lost = this.queue.length - this.head + (this.batch ? this.batch.ends.length : 0);
    if (lost > 0) this.opts.logger.warn({ lost }, "events not delivered to the relay before exit");
    this.socket?.end();
    closeSync(this.fd);
  }

  private writeFile(line: string): void {
    try {
      writeSync(this.fd, line);
    } catch (err) {
      // A full disk must not stop the honeypot; log the first failure and then every thousandth.
      if (this.fileErrors++ % 1000 === 0) this.opts.logger.error({ err, count: this.fileErrors }, "event file write failed");
    }
  }

  private enqueue(line: string): void {
    this.queue.push(line);
    this.queuedChars += line.length;
    while (this.queue.length - this.head > this.maxEvents || this.queuedChars > this.maxChars) {
      // Either bound exceeded means lines remain past head: both count only those lines.
      this.queuedChars -= this.queue[this.head]!.length;
      this.head++;
      if (this.dropped++ === 0) this.opts.logger.warn("relay queue full: dropping the oldest events");
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  private pending(): boolean {
    return this.batch !== null || this.head < this.queue.length;
  }

  private takeBatch(): Batch {
    const lines = this.queue.slice(this.head, this.head + BATCH_LINES);
    this.head += lines.length;
    const ends: number[] = [];
    let end = 0;
    for (const line of lines) {
      this.queuedChars -= line.length;
      end += Buffer.byteLength(line);
      ends.push(end);
    }
    return { bytes: Buffer.from(lines.join("")), ends, written: 0 };
  }

  private pump(): void {
    const socket = this.socket;
    if (!socket) return;
    for (;;) {
      this.batch ??= this.pending() ? this.takeBatch() : null;
      const batch = this.batch;
      if (!batch) break;
      // Bun's socket.write is unbuffered: it returns what the kernel took; the rest waits for drain.
      const n = socket.write(batch.bytes.subarray(batch.written));
      if (n > 0) batch.written += n;
      if (batch.written < batch.bytes.length) return;
      this.batch = null;
    }
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private connect(): void {
    const relay = this.opts.relay;
    if (!relay || this.closed || this.socket || this.connecting) return;
    this.connecting = true;
    Bun.connect({
      hostname: relay.host,
      port: relay.port,
      socket: {
        open: (socket) => {
          this.connecting = false;
          this.socket = socket;
          this.backoff = BACKOFF_FIRST_MS;
          this.opts.logger.info({ relay, dropped: this.dropped }, "connected to the event relay");
          this.pump();
        },
        drain: () => this.pump(),
        data: () => {},
        close: () => this.lost(),
        error: (_socket, err) => this.opts.logger.warn({ err: err.message }, "event relay socket error"),
        connectError: () => this.lost(),
      },
    }).catch(() => this.lost());
  }

  private lost(): void {
    if (this.retryTimer || (!this.socket && !this.connecting)) return;
    const wasOpen = this.socket !== null;
    this.socket = null;
    this.connecting = false;
    this.rewindBatch();
    if (this.closed) return;
    if (wasOpen) this.opts.logger.warn("event relay connection lost");
    const delay = this.backoff * (0.5 + Math.random() / 2);
    this.backoff = Math.min(this.backoff * 2, BACKOFF_MAX_MS);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect();
    }, delay);
  }

  private rewindBatch(): void {
    const batch = this.batch;
    if (!batch || batch.written === 0) return;
    const done = batch.ends.findIndex((end) => end > batch.written);
    if (done === -1) {
      this.batch = null;
      return;
    }
    const start = done === 0 ? 0 : batch.ends[done - 1]!;
    this.batch = { bytes: batch.bytes.subarray(start), ends: batch.ends.slice(done).map((e) => e - start), written: 0 };
  }
}
