/**
 * The one place loggers are made. Components take a logger (a child named after them) instead
 * of importing a global, so tests can pass a silent one.
 */
import { writeSync } from "node:fs";
import pino, { type DestinationStream, type Logger } from "pino";
import { isoFormatter } from "./protocol/time";

export type { Logger };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Fields that must never reach a log line (credentials). */
const REDACT = ["token", "*.token", "authorization", "*.authorization", "headers.authorization", "totp_key", "*.totp_key", "secret", "*.secret"];

/** Where a root logger keeps what event lines need (children inherit it through their prototype). */
const EVENT_LINES = Symbol("honeybee.eventLines");

interface EventLineOutput {
  out: BatchedOutput;
  time: (ms: number) => string;
}

export function createLogger(level: LogLevel = "info", options: { pretty?: boolean; destination?: DestinationStream } = {}): Logger {
  const pretty = !options.destination && (options.pretty ?? (process.stdout.isTTY === true && !process.env.CI));
  // pino-pretty in the same thread: a worker transport would keep tests and short commands alive.
  const batched = pretty ? null : batchedOutput(options.destination);
  const out: DestinationStream = batched ?? require("pino-pretty")({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
  const time = isoFormatter();
  const logger = pino({ level, base: undefined, redact: REDACT, timestamp: pretty ? true : () => `,"time":"${time(Date.now())}"` }, out);
  if (batched) Object.defineProperty(logger, EVENT_LINES, { value: { out: batched, time } satisfies EventLineOutput });
  return logger;
}

/** An event's fields as its log line shows them (its data comes as the stored UTF-8 JSON). */
export interface EventLine {
  /** Null on a cluster's ingest instance: the writer instance gives the ids later. */
  id: number | null;
  node_id: string | null;
  pot_id: string | null;
  pot_type: string | null;
  event_type: string;
  timestamp: string;
  src_ip: string | null;
}

/**
 * Writes the log line of an event whose data is `data[from, to)`; `escape` when the data may
 * hold a control character (see `mayNeedEscaping`).
 */
export type EventLogger = (e: EventLine, data: Uint8Array, from: number, to: number, escape?: boolean) => void;

/** What an event log line must not carry raw: C0 and C1 controls, DEL, line and paragraph separators. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
export const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/**
 * Whether text (event data, or the line it was cut from) holds a character that the log must
 * not show raw. A regular expression over the text is a twentieth of the cost of looking at
 * every byte while copying (measured: 0.05 against 1 µs for a 350-byte event), so the copy
 * escapes only when this says so.
 */
export function mayNeedEscaping(text: string): boolean {
  return CONTROLS.test(text);
}

/**
 * JSON text of a string field. Pots, kinds, event types and node ids repeat from line to line:
 * each field keeps its last value's text (JSON.stringify per field was a fifth of a line's
 * cost); addresses need quoting only when they hold a quote or a backslash.
 */
function jsonField(): (v: string | null) => string {
  let last: string | null = null;
  let text = "null";
  return (v) => {
    if (v !== last) {
      last = v;
      text = v === null ? "null" : jsonString(v);
    }
    return text;
  };
}

function jsonAddress(v: string | null): string {
  if (v === null) return "null";
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 34 || c === 92 || c < 32 || c >= 127) return jsonString(v);
  }
  return `"${v}"`;
}

/**
 * JSON.stringify, plus escapes for what it leaves raw and a terminal or a line-based reader
 * takes for a control: DEL, the C1 controls and the Unicode line and paragraph separators.
 */
export function jsonString(v: string): string {
  return JSON.stringify(v).replace(/[\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * The one log line per event (`log_events` in docs/configuration.md), `{"level":30,"time":...,<bindings>,"event":{...},
 * "msg":"event"}` as pino writes it; null when the logger does not log at info.
 *
 * On JSON output the line is put together here, its data copied as stored, byte for byte:
 * through pino, data was parsed only to be serialised again and the log cost more than the
 * rest of the ingest path together (measured: ~140k events/s with the log, ~480k without).
 * Event lines carry only what honeypots recorded, so they need none of the credential
 * redaction. Pretty (terminal) output goes through pino as usual.
 */
export function eventLog(logger: Logger, parse: (data: string) => unknown): EventLogger | null {
  if (!logger.isLevelEnabled("info")) return null;
  const lines = (logger as unknown as { [EVENT_LINES]?: EventLineOutput })[EVENT_LINES];
  if (!lines) return (e, data, from, to) => logger.info({ event: { ...e, data: parse(Buffer.from(data.buffer, data.byteOffset + from, to - from).toString("utf8")) } }, "event");
  const bindings = JSON.stringify(logger.bindings()).slice(1, -1);
  const afterTime = `"${bindings ? "," + bindings : ""},"event":{"id":`;
  const { out, time } = lines;
  const [nodeId, potId, potType, eventType] = [jsonField(), jsonField(), jsonField(), jsonField()];
  return (e, data, from, to, escape = true) =>
    out.writeWith(
      `{"level":30,"time":"${time(Date.now())}${afterTime}${e.id},"node_id":${nodeId(e.node_id)},"pot_id":${potId(e.pot_id)},"pot_type":${potType(e.pot_type)},"event_type":${eventType(e.event_type)},"timestamp":"${e.timestamp}","src_ip":${jsonAddress(e.src_ip)},"data":`,
      data,
      from,
      to,
      `},"msg":"event"}\n`,
      escape,
    );
}

interface BatchedOutput extends DestinationStream {
  /** Writes `head`, `bytes[from, to)` (escaped, see `copyEscaped`, when `escape`) and `tail` as one line. */
  writeWith(head: string, bytes: Uint8Array, from: number, to: number, tail: string, escape: boolean): void;
}

/**
 * The output for log lines (standard output, or `to` in tests), written once per turn of the
 * event loop rather than once per line: with one line per event the write() per
 * line was most of the cost of the event log (measured). Lines are encoded into one buffer as
 * they come and written synchronously, so a line is out by the end of the turn that logged
 * it, and what is pending when the process exits is written then.
 */
function batchedOutput(to?: DestinationStream): BatchedOutput {
  let buf = Buffer.allocUnsafe(1 << 17);
  let len = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (len === 0) return;
    if (to) to.write(buf.toString("utf8", 0, len));
    else writeFully(1, buf, len);
    len = 0;
  };
  process.on("exit", flush);
  const room = (bytes: number) => {
    if (len + bytes <= buf.length) return;
    flush();
    if (bytes > buf.length) buf = Buffer.allocUnsafe(bytes);
  };
  const written = () => {
    if (len >= 1 << 16) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return {
    write(line: string) {
      room(line.length * 3);
      len += buf.write(line, len);
      written();
    },
    writeWith(head, bytes, from, to, tail, escape) {
      // Escaping at most doubles the data (3 bytes of U+2028 become the 6 of its escape).
      room((head.length + tail.length) * 3 + (to - from) * 2);
      len += buf.write(head, len);
      if (escape) len = copyEscaped(bytes, from, to, buf, len);
      else {
        buf.set(bytes.subarray(from, to), len);
        len += to - from;
      }
      len += buf.write(tail, len);
      written();
    },
  };
}

/**
 * Copies event data (UTF-8 JSON as stored) into a log line with no raw control in it: a
 * carriage return or an escape sequence in a log line can hide or forge lines on a terminal
 * or in a line-based collector. Valid JSON holds raw controls only as whitespace between
 * tokens (C0: replaced by a space); DEL, C1 controls and U+2028/U+2029 only inside strings
 * (replaced by their \u escape). Returns the offset after the copy.
 */
export function copyEscaped(src: Uint8Array, from: number, to: number, dst: Buffer, off: number): number {
  let clean = from;
  for (let i = from; i < to; i++) {
    const b = src[i]!;
    if (b >= 32 && b < 127) continue;
    if (b >= 128 && b !== 0xc2 && b !== 0xe2) continue;
    // Something to look at: copy the clean run before it.
    let escaped: string | null = null;
    let width = 1;
    if (b < 32) escaped = " ";
    else if (b === 127) escaped = "\\u007f";
    else if (b === 0xc2 && i + 1 < to && src[i + 1]! >= 0x80 && src[i + 1]! <= 0x9f) {
      escaped = "\\u00" + src[i + 1]!.toString(16);
      width = 2;
    } else if (b === 0xe2 && i + 2 < to && src[i + 1] === 0x80 && (src[i + 2] === 0xa8 || src[i + 2] === 0xa9)) {
      escaped = src[i + 2] === 0xa8 ? "\\u2028" : "\\u2029";
      width = 3;
    }
    if (escaped === null) continue;
    dst.set(src.subarray(clean, i), off);
    off += i - clean;
    off += dst.write(escaped, off, "latin1");
    i += width - 1;
    clean = i + 1;
  }
  dst.set(src.subarray(clean, to), off);
  return off + (to - clean);
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `buf[0, len)`, waiting out a full pipe; a closed output drops the lines (logging must not stop Core). */
function writeFully(fd: number, buf: Buffer, len: number): void {
  for (let off = 0; off < len; ) {
    try {
      off += writeSync(fd, buf, off, len - off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") return;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

export const silentLogger = (): Logger => pino({ level: "silent" });
