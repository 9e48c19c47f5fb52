/**
 * The event socket's fast path: reads a flat honeypot-native line (Cowrie's output, a node's
 * relayed events; docs/protocol.md, "Events") without building an object for it.
 *
 * At the ingest rate `JSON.parse` alone was a quarter of the receiving thread, and most of the
 * object it builds was thrown away again after re-serialising `data` (measured: parse 0.92 µs,
 * `JSON.stringify` of data 0.30 µs per 300-byte event; this scanner 0.4 µs for both). The
 * scanner validates the line as JSON, picks out the fields that become columns, and notes
 * where they are: the rest of the line is the event's `data`, as the honeypot wrote it, and
 * the pipeline copies it byte for byte from the socket's chunk into the batch (`writeData`).
 *
 * It only says yes when it is sure: an object with an `eventid`, keys without escapes, the
 * fields it extracts plain (strings free of escapes; nested values only in data). Anything
 * else (nested values, envelopes, escapes in a column, invalid JSON) is `false`, and the line
 * takes the general path (`JSON.parse` + `normalise`), which also words every error. A test
 * checks the two paths agree on generated and mutated lines.
 */

import { parseTimestamp, parseTimestampIn } from "./timestamp";
import { hasBackslash, isDigits, keyEnd, MAX_LEVELS, Recent, skipNested, skipNumber, skipSpace, skipString, startLine } from "./json-scan";

/** What a scan read; one instance is reused for every line (no allocation per event). */
export interface ScannedLine {
  /** What was scanned: a flat native line, or a PotEvent or PotLog envelope (scan-envelope.ts). */
  shape: number;
  /** The event type: `eventid`, a PotEvent's `event_type`/`event`, a PotLog's `log_type`. */
  eventid: string;
  /** The node_id literal's digits, null when absent or `null`. */
  nodeDigits: string | null;
  potId: string | null;
  potType: string | null;
  honeypotId: string | null;
  honeypotType: string | null;
  /** `timestamp` as sent (TIME_ABSENT when absent or null). */
  timestamp: ScannedTime;
  /**
   * Cowrie's `time` (stays in data; the fallback when there is no `timestamp`). For a PotLog,
   * the honeypot's own `data.timestamp` (cut from data; preferred to the node's `timestamp`).
   */
  time: ScannedTime;
  srcIp: string | null;
  username: string | null;
  password: string | null;
  /** The line scanned. */
  line: string;
  /**
   * The event's data is the line without the members that became columns: these runs of
   * members, `[start, end)` pairs of indices into `line`, joined by commas inside braces.
   */
  runs: number[];
}

/**
 * A time member as scanned: absent, a number literal's value, or text, which stays in the line
 * (`line[at, end)`) until it is read (`timeOf`). Cut out of the line, the text cost a string
 * per event, and the first read of a new string costs more than reading it where it is:
 * measured in the receiving thread (event socket + pipeline, the bench's events at 8
 * connections), reading the time took 0.19 of its 1.85 µs per event for flat lines; read in
 * place, three interleaved pairs of runs took 0.09 µs per event less on average for flat
 * lines (0.01-0.18) and 0.06 for PotLog, and the process's RSS was 15-20 MB smaller.
 */
export interface ScannedTime {
  kind: number;
  value: number;
  at: number;
  end: number;
}

export const TIME_ABSENT = 0;
export const TIME_NUMBER = 1;
export const TIME_TEXT = 2;

const newTime = (): ScannedTime => ({ kind: TIME_ABSENT, value: 0, at: 0, end: 0 });

export function timeText(m: ScannedTime, at: number, end: number): void {
  m.kind = TIME_TEXT;
  m.at = at;
  m.end = end;
}

export function timeNumber(m: ScannedTime, value: number): void {
  m.kind = TIME_NUMBER;
  m.value = value;
}

/** The time in milliseconds since the epoch (parseTimestamp's rules); null when absent or unreadable. */
export function timeOf(line: string, m: ScannedTime): number | null {
  if (m.kind === TIME_TEXT) return parseTimestampIn(line, m.at, m.end);
  return m.kind === TIME_NUMBER ? parseTimestamp(m.value) : null;
}

/** Lines whose column members split data into more runs than this take the general path. */
const MAX_RUNS = 16;

export function newScannedLine(): ScannedLine {
  return { shape: 0, eventid: "", nodeDigits: null, potId: null, potType: null, honeypotId: null, honeypotType: null, timestamp: newTime(), time: newTime(), srcIp: null, username: null, password: null, line: "", runs: [] };
}

/** The event's data as JSON text. */
export function dataText(s: ScannedLine): string {
  const r = s.runs;
  let text = "{";
  for (let k = 0; k < r.length; k += 2) text += (k === 0 ? "" : ",") + s.line.slice(r[k], r[k + 1]);
  return text + "}";
}

/** Bytes `writeData` writes at most: the runs, their commas and the braces. */
export function dataBytes(s: ScannedLine): number {
  const r = s.runs;
  let n = 2 + Math.max(0, r.length / 2 - 1);
  for (let k = 0; k < r.length; k += 2) n += r[k + 1]! - r[k]!;
  return n;
}

/**
 * Writes the event's data as UTF-8 into `dst` at `off`, copying the runs straight from the
 * bytes the line was decoded from (`src`, the line starting at `at`; the line must be ASCII,
 * so that indices are byte offsets). Returns the offset after it.
 */
export function writeData(s: ScannedLine, src: Uint8Array, at: number, dst: Buffer, off: number): number {
  const r = s.runs;
  dst[off++] = 123; // {
  for (let k = 0; k < r.length; k += 2) {
    if (k > 0) dst[off++] = 44; // ,
    // A loop, not `set(subarray())`: runs are short, and the view per run cost more than the copy.
    for (let q = at + r[k]!, end = at + r[k + 1]!; q < end; q++) dst[off++] = src[q]!;
  }
  dst[off++] = 125; // }
  return off;
}

// Which field a key is: the keys cut out of data (columns), then the ones only read.
const OTHER = 0;
const EVENTID = 1;
const NODE_ID = 2;
const POT_ID = 3;
const POT_TYPE = 4;
const HONEYPOT_ID = 5;
const HONEYPOT_TYPE = 6;
const TIMESTAMP = 7;
const SRC_IP = 8;
const TIME = 9;
const USERNAME = 10;
const PASSWORD = 11;
const PROTO = 12;
const MESSAGE = 13;
const FIRST_KEPT = TIME;

function fieldOf(t: string, at: number, len: number): number {
  // By length and first letters before any compare: most keys are none of these.
  const c = t.charCodeAt(at);
  switch (len) {
    case 4:
      return c === 116 && t.startsWith("time", at) ? TIME : OTHER;
    case 6:
      if (c === 112) return t.startsWith("pot_id", at) ? POT_ID : OTHER;
      return c === 115 && t.startsWith("src_ip", at) ? SRC_IP : OTHER;
    case 7:
      if (c === 101) return t.startsWith("eventid", at) ? EVENTID : OTHER;
      if (c === 109) return t.startsWith("message", at) ? MESSAGE : OTHER;
      return c === 110 && t.startsWith("node_id", at) ? NODE_ID : OTHER;
    case 8: {
      if (c === 117) return t.startsWith("username", at) ? USERNAME : OTHER;
      if (c !== 112) return OTHER;
      const d = t.charCodeAt(at + 1);
      if (d === 111) return t.startsWith("pot_type", at) ? POT_TYPE : OTHER;
      return d === 97 && t.startsWith("password", at) ? PASSWORD : OTHER;
    }
    case 9:
      if (c === 116) return t.startsWith("timestamp", at) ? TIMESTAMP : OTHER;
      return c === 95 && t.startsWith("__proto__", at) ? PROTO : OTHER;
    case 20:
      return c === 104 && t.startsWith("honeybee_honeypot_id", at) ? HONEYPOT_ID : OTHER;
    case 22:
      return c === 104 && t.startsWith("honeybee_honeypot_type", at) ? HONEYPOT_TYPE : OTHER;
    default:
      return OTHER;
  }
}


const recentTypes = new Recent();
const recentPots = new Recent();
const recentNodes = new Recent();

const STRING = 1;
const NUMBER = 2;
const NULL = 3;
const BOOL = 4;
const NESTED = 5;

/**
 * Scans `t` into `out`; true when `t` is a flat native event this path can take whole. On
 * false, `out` holds garbage and the caller takes the general path, which also refuses a line
 * nested deeper than `maxDepth` (`max_nesting_depth`): this path never takes one.
 */
export function scanNativeLine(t: string, out: ScannedLine, maxDepth = MAX_LEVELS): boolean {
  const levels = Math.min(maxDepth, MAX_LEVELS);
  const n = t.length;
  out.eventid = "";
  out.nodeDigits = out.potId = out.potType = out.honeypotId = out.honeypotType = out.srcIp = out.username = out.password = null;
  out.timestamp.kind = out.time.kind = TIME_ABSENT;
  out.line = t;
  out.shape = 0;
  const runs = out.runs;
  runs.length = 0;
  let hasEventid = false;
  let runStart = -1;
  let runEnd = -1;
  startLine(t);

  let i = skipSpace(t, 0);
  if (t.charCodeAt(i) !== 123 /* { */) return false;
  i = skipSpace(t, i + 1);
  if (t.charCodeAt(i) === 125 /* } */) return false; // {} has no eventid
  for (;;) {
    // Key: a string without escapes.
    const memberStart = i;
    const ks = i + 1;
    i = keyEnd(t, memberStart);
    if (i < 0) return false;
    let c: number;
    const field = fieldOf(t, ks, i - ks);
    if (field === PROTO) return false;
    i = skipSpace(t, i + 1);
    if (t.charCodeAt(i) !== 58 /* : */) return false;
    i = skipSpace(t, i + 1);

    // Value.
    const vs = i;
    c = t.charCodeAt(i);
    let kind: number;
    if (c === 34) {
      kind = STRING;
      i = skipString(t, i);
      if (i < 0) return false;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      kind = NUMBER;
      i = skipNumber(t, i);
      if (i < 0) return false;
    } else if (t.startsWith("null", i)) {
      kind = NULL;
      i += 4;
    } else if (t.startsWith("true", i)) {
      kind = BOOL;
      i += 4;
    } else if (t.startsWith("false", i)) {
      kind = BOOL;
      i += 5;
    } else if (c === 123 || c === 91) {
      // Nested values are data only (Cowrie's kex lists, session params, its `message: []`).
      // An object `message` may make the line an envelope (protocol/classify.ts): the general
      // path decides.
      if (field !== OTHER && (field !== MESSAGE || c === 123)) return false;
      kind = NESTED;
      i = skipNested(t, i, 2, levels);
      if (i < 0) return false;
    } else return false;
    const ve = i;

    if (field !== OTHER && field !== MESSAGE) {
      // A field this path reads: plain strings (no escapes to undo) and the forms noted.
      if (kind === STRING && hasBackslash(t, vs + 1, ve - 1)) return false;
      switch (field) {
        case EVENTID:
          if (kind !== STRING) return false;
          out.eventid = recentTypes.of(t, vs + 1, ve - 1);
          hasEventid = true;
          break;
        case POT_ID:
        case POT_TYPE:
        case HONEYPOT_ID:
        case HONEYPOT_TYPE: {
          if (kind !== STRING && kind !== NULL) return false;
          const v = kind === NULL ? null : recentPots.of(t, vs + 1, ve - 1);
          if (field === POT_ID) out.potId = v;
          else if (field === POT_TYPE) out.potType = v;
          else if (field === HONEYPOT_ID) out.honeypotId = v;
          else out.honeypotType = v;
          break;
        }
        case NODE_ID:
          if (kind === NULL) out.nodeDigits = null;
          else if (kind === NUMBER && isDigits(t, vs, ve)) out.nodeDigits = recentNodes.of(t, vs, ve);
          else return false;
          break;
        case SRC_IP:
        case USERNAME:
        case PASSWORD: {
          if (kind !== STRING && kind !== NULL) return false;
          const str = kind === STRING ? t.slice(vs + 1, ve - 1) : null;
          if (field === SRC_IP) out.srcIp = str;
          else if (field === USERNAME) out.username = str;
          else out.password = str;
          break;
        }
        case TIMESTAMP:
        case TIME: {
          const m = field === TIMESTAMP ? out.timestamp : out.time;
          if (kind === STRING) timeText(m, vs + 1, ve - 1);
          else if (kind === NUMBER) timeNumber(m, Number(t.slice(vs, ve)));
          else if (kind !== NULL) return false;
          break;
        }
      }
    }

    // Data is the members that are not columns, cut out of the text in runs.
    if (field === OTHER || field >= FIRST_KEPT) {
      if (runStart < 0) runStart = memberStart;
      runEnd = ve;
    } else if (runStart >= 0) {
      if (runs.length === 2 * MAX_RUNS) return false;
      runs.push(runStart, runEnd);
      runStart = -1;
    }

    i = skipSpace(t, i);
    c = t.charCodeAt(i);
    if (c === 44 /* , */) {
      i = skipSpace(t, i + 1);
      continue;
    }
    if (c === 125 /* } */) break;
    return false;
  }
  if (skipSpace(t, i + 1) !== n || !hasEventid) return false;
  if (runStart >= 0) runs.push(runStart, runEnd);
  return true;
}
