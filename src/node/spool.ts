/**
 * The event spool: every event the relay accepts is appended here first and deleted only after
 * Core acknowledged it, so events survive a Core outage, a Core restart and a node restart.
 *
 * Layout: `<dir>/<first seq>.ndjson` segment files (one event per line, seq = position in the
 * stream) and `<dir>/state.json` (first unacknowledged seq, events dropped so far). Appends go
 * to the newest segment; fully acknowledged segments are deleted; when the spool outgrows its
 * bound the oldest segment is dropped whole and its unacknowledged events are counted.
 *
 * Durability: appends are plain write(2) calls without fsync, so they survive a crash of the
 * node process (the page cache keeps them) but not a power cut; an fsync per batch would cap
 * the event rate at the disk's sync rate.
 */
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log";
import { writeFileAtomic } from "./identity";

export interface SpoolOptions {
  dir: string;
  maxBytes: number;
  segmentBytes: number;
  logger: Logger;
  /** Called after the bound forced the oldest events out: how many now, how many in total. */
  onDrop?(dropped: number, total: number): void;
  /** Called after every append, so a forwarder can send without polling. */
  onAppend?(): void;
}

interface Segment {
  first: number;
  count: number;
  bytes: number;
  path: string;
}

const STATE_WRITE_INTERVAL_MS = 200;

export class Spool {
  private segments: Segment[] = [];
  private fd = -1;
  /** Lines of the newest segment, kept in memory: the forwarder usually reads just behind the writer. */
  private activeLines: string[] = [];
  private cache: { first: number; lines: string[] } | null = null;
  private spoolId = "";
  private headSeq = 0;
  private ackedSeq = 0;
  private dropped = 0;
  private totalBytes = 0;
  private stateTimer: ReturnType<typeof setTimeout> | null = null;
  private lastStateWrite = 0;

  private constructor(private readonly opts: SpoolOptions) {}

  static open(opts: SpoolOptions): Spool {
    const spool = new Spool(opts);
    spool.recover();
    return spool;
  }

  /**
   * Random id of this spool's sequence numbering, kept across restarts. (id, seq) names one
   * event for good, which is what Core needs to drop a replay of an event it committed but
   * could not acknowledge before it died.
   */
  get id(): string {
    return this.spoolId;
  }
  /** Disk bound; UpdateConfig changes it live, and a lower bound drops the oldest events at once. */
  get maxBytes(): number {
    return this.opts.maxBytes;
  }
  set maxBytes(bytes: number) {
    this.opts.maxBytes = bytes;
    this.enforceBound();
  }

  /** Next seq to be assigned. */
  get head(): number {
    return this.headSeq;
  }
  /** First seq not yet acknowledged by Core. */
  get acked(): number {
    return this.ackedSeq;
  }
  get pending(): number {
    return this.headSeq - this.ackedSeq;
  }
  get bytes(): number {
    return this.totalBytes;
  }
  get droppedTotal(): number {
    return this.dropped;
  }

  /**
   * Appends events (one JSON text each, no newline): one write per segment touched. A big batch
   * is split at segment boundaries, so the bound always drops in units of one segment.
   */
  append(lines: string[]): void {
    if (lines.length === 0) return;
    let start = 0;
    let room = this.opts.segmentBytes - this.segments[this.segments.length - 1]!.bytes;
    for (let i = 0; i < lines.length; i++) {
      room -= Buffer.byteLength(lines[i]!) + 1;
      if (room <= 0) {
        this.write(lines, start, i + 1);
        this.rotate();
        start = i + 1;
        room = this.opts.segmentBytes;
      }
    }
    this.write(lines, start, lines.length);
    this.enforceBound();
    this.opts.onAppend?.();
  }

  private write(lines: string[], from: number, to: number): void {
    if (from >= to) return;
    const part = from === 0 && to === lines.length ? lines : lines.slice(from, to);
    const data = Buffer.from(part.join("\n") + "\n");
    for (let done = 0; done < data.length; ) done += writeSync(this.fd, data, done);
    const active = this.segments[this.segments.length - 1]!;
    active.count += part.length;
    active.bytes += data.length;
    for (const l of part) this.activeLines.push(l);
    this.headSeq += part.length;
    this.totalBytes += data.length;
  }

  /**
   * Up to `max` events from `from` on, from one segment. `first` is the seq of the first line
   * returned: later than `from` when the events at `from` were dropped.
   */
  read(from: number, max: number): { first: number; lines: string[] } {
    const oldest = this.segments[0]!;
    if (from < oldest.first) from = oldest.first;
    if (from >= this.headSeq || max <= 0) return { first: from, lines: [] };
    const seg = this.segments.find((s) => from < s.first + s.count)!;
    const lines = this.linesOf(seg);
    const at = from - seg.first;
    return { first: from, lines: lines.slice(at, at + max) };
  }

  /** Core holds every event before `upTo`. */
  ack(upTo: number): void {
    const next = Math.min(upTo, this.headSeq);
    if (next <= this.ackedSeq) return;
    this.ackedSeq = next;
    while (this.segments.length > 1 && this.segments[0]!.first + this.segments[0]!.count <= this.ackedSeq) this.removeOldest();
    this.saveStateSoon();
  }

  close(): void {
    if (this.stateTimer) clearTimeout(this.stateTimer);
    this.stateTimer = null;
    this.saveState();
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private linesOf(seg: Segment): string[] {
    if (seg === this.segments[this.segments.length - 1]) return this.activeLines;
    if (this.cache?.first !== seg.first) {
      const text = readFileSync(seg.path, "utf8");
      this.cache = { first: seg.first, lines: text.length ? text.slice(0, -1).split("\n") : [] };
    }
    return this.cache.lines;
  }

  private rotate(): void {
    const done = this.segments[this.segments.length - 1]!;
    closeSync(this.fd);
    this.cache = { first: done.first, lines: this.activeLines };
    this.startSegment(this.headSeq);
  }

  private startSegment(first: number): void {
    const path = join(this.opts.dir, `${String(first).padStart(16, "0")}.ndjson`);
    this.fd = openSync(path, "a");
    this.activeLines = [];
    this.segments.push({ first, count: 0, bytes: 0, path });
  }

  private enforceBound(): void {
    let droppedNow = 0;
    while (this.totalBytes > this.opts.maxBytes && this.segments.length > 1) {
      const seg = this.segments[0]!;
      droppedNow += Math.max(0, seg.first + seg.count - Math.max(this.ackedSeq, seg.first));
      this.ackedSeq = Math.max(this.ackedSeq, seg.first + seg.count);
      this.removeOldest();
    }
    if (droppedNow === 0) return;
    this.dropped += droppedNow;
    this.opts.logger.warn({ dropped: droppedNow, dropped_total: this.dropped, max_bytes: this.opts.maxBytes }, "event spool is full: dropped the oldest events");
    this.saveStateSoon();
    this.opts.onDrop?.(droppedNow, this.dropped);
  }

  private removeOldest(): void {
    const seg = this.segments.shift()!;
    this.totalBytes -= seg.bytes;
    if (this.cache?.first === seg.first) this.cache = null;
    try {
      unlinkSync(seg.path);
    } catch {}
  }

  private saveStateSoon(): void {
    if (this.stateTimer) return;
    const wait = Math.max(0, this.lastStateWrite + STATE_WRITE_INTERVAL_MS - Date.now());
    this.stateTimer = setTimeout(() => {
      this.stateTimer = null;
      this.saveState();
    }, wait);
  }

  private saveState(): void {
    this.lastStateWrite = Date.now();
    writeFileAtomic(join(this.opts.dir, "state.json"), JSON.stringify({ id: this.spoolId, acked: this.ackedSeq, dropped: this.dropped }) + "\n");
  }

  /** Rebuilds the segment list from disk; a torn last line (crash mid-write) is cut off. */
  private recover(): void {
    const { dir } = this.opts;
    mkdirSync(dir, { recursive: true });
    const stateFile = join(dir, "state.json");
    if (existsSync(stateFile)) {
      try {
        const state = JSON.parse(readFileSync(stateFile, "utf8"));
        this.ackedSeq = Number.isSafeInteger(state.acked) ? state.acked : 0;
        this.dropped = Number.isSafeInteger(state.dropped) ? state.dropped : 0;
        if (typeof state.id === "string" && /^[0-9a-f]{16}$/.test(state.id)) this.spoolId = state.id;
      } catch {
        this.opts.logger.warn({ file: stateFile }, "spool state is unreadable; replaying every spooled event");
      }
    }
    if (!this.spoolId) {
      this.spoolId = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
      this.saveState();
    }
    const files = readdirSync(dir).filter((f) => /^\d{16}\.ndjson$/.test(f)).sort();
    for (const f of files) {
      const path = join(dir, f);
      const buf = readFileSync(path);
      let end = buf.length;
      while (end > 0 && buf[end - 1] !== 10) end--;
      if (end < buf.length) {
        const fd = openSync(path, "r+");
        ftruncateSync(fd, end);
        closeSync(fd);
      }
      let count = 0;
      for (let i = 0; i < end; i++) if (buf[i] === 10) count++;
      const first = Number(f.slice(0, 16));
      if (count === 0 || first + count <= this.ackedSeq) {
        unlinkSync(path);
        continue;
      }
      this.segments.push({ first, count, bytes: end, path });
      this.totalBytes += end;
    }
    const last = this.segments[this.segments.length - 1];
    this.headSeq = Math.max(last ? last.first + last.count : 0, this.ackedSeq);
    if (this.segments.length > 0 && this.ackedSeq < this.segments[0]!.first) this.ackedSeq = this.segments[0]!.first;
    this.startSegment(this.headSeq);
    if (this.pending > 0) this.opts.logger.info({ events: this.pending, bytes: this.totalBytes }, "spool holds events from before the restart; they will be sent to Core");
  }
}
