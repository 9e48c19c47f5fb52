/**
 * One attacker connection to a honeypot of any kind and the events it produces, named
 * `<kind>.<event>` with the fields every kind shares: `src_ip`, `src_port`, `dst_ip`, `dst_port`,
 * `session` (12 hex characters, one id per connection, like Cowrie's) and `protocol`, beside what
 * the event captured. Core builds its sessions from the `session` field and reads what an event
 * adds by the end of its name, as Cowrie's: `.session.connect`, `.login.success` and
 * `.login.failed` (`username`, `password`), `.command.input` (`input`), `.session.file_upload`
 * and `.session.file_download` (`shasum`), `.session.closed` (`duration`); docs/honeypots.md.
 */
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import { plainIp } from "./address.ts";
import type { EventSink } from "./sink.ts";

export interface Endpoint {
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  protocol: string;
}

export class PotSession {
  readonly id = randomBytes(6).toString("hex");
  private readonly startedAt = performance.now();
  private closed = false;

  constructor(
    private readonly sink: EventSink,
    /** The kind: the first part of every event's name. */
    readonly kind: string,
    readonly endpoint: Endpoint,
  ) {}

  /** A session for a connection just accepted; emits `<kind>.session.connect` with `extra`. */
  static accepted(socket: Socket, kind: string, protocol: string, sink: EventSink, extra: Record<string, unknown> = {}): PotSession {
    const session = new PotSession(sink, kind, {
      src_ip: plainIp(socket.remoteAddress),
      src_port: socket.remotePort ?? 0,
      dst_ip: plainIp(socket.localAddress),
      dst_port: socket.localPort ?? 0,
      protocol,
    });
    session.emit("session.connect", extra);
    return session;
  }

  /** Records `<kind>.<event>`; `fields` never override the connection's own. */
  emit(event: string, fields: Record<string, unknown> = {}): void {
    if (this.closed) return;
    this.sink.emit({ eventid: `${this.kind}.${event}`, ...fields, ...this.endpoint, session: this.id });
  }

  /** Emits `<kind>.session.closed` once, with the session's length in seconds. */
  close(fields: Record<string, unknown> = {}): void {
    if (this.closed) return;
    this.emit("session.closed", { ...fields, duration: Math.round(performance.now() - this.startedAt) / 1000 });
    this.closed = true;
  }
}

/** Printable ASCII as it is, anything else as `\xNN`: how a captured byte string is shown in events. */
export function printable(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, "0")}`;
  return out;
}

/**
 * Bytes a connection has sent and not yet parsed, bounded: a peer that sends more than `max`
 * before a message completes is cut off (`push` answers false), so no connection holds more than
 * that however it floods. Chunks are appended into spare room, and the held bytes move to a new
 * buffer (twice what they need) only when the room runs out: a peer sending a byte at a time
 * costs linear time, not a copy of everything held per byte. Bytes never move within a buffer,
 * so a `view()` a parser kept stays valid.
 */
export class InputBuffer {
  private buf = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  constructor(readonly max: number) {}

  get length(): number {
    return this.end - this.start;
  }

  /** Appends a chunk; false when that would pass `max` (the chunk is not kept). */
  push(chunk: Uint8Array): boolean {
    const held = this.end - this.start;
    if (held + chunk.length > this.max) return false;
    if (this.end + chunk.length > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.min(this.max, Math.max(4096, 2 * (held + chunk.length))));
      this.buf.copy(next, 0, this.start, this.end);
      this.buf = next;
      this.start = 0;
      this.end = held;
    }
    this.buf.set(chunk, this.end);
    this.end += chunk.length;
    return true;
  }

  /** The bytes held, for a parser to look at. */
  view(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }

  /** Drops the first `n` bytes (a message the parser has taken). */
  consume(n: number): void {
    this.start = Math.min(this.end, this.start + n);
  }
}
