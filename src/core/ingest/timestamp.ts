/**
 * Reading an event's time: what honeypots and nodes write (ISO 8601, RFC 2822, unix seconds,
 * milliseconds or microseconds, Go's `%v` exponent form) into milliseconds since the epoch.
 * Anything else is unreadable (null): the caller keeps the text and uses the receive time.
 */

/** Unix time in seconds below this, milliseconds from here (1e11 s is the year 5138, 1e11 ms is 1973). */
const SECONDS_LIMIT = 1e11;
/** Microseconds from here (1e14 ms is the year 5138). */
const MICROS_LIMIT = 1e14;
const MAX_TS = 8.64e15;
// Exponent form too: the upstream Go node writes numbers as `%v` (`1.795309499e+09`).
const NUMERIC = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
/** ISO 8601 (`T` or a space between date and time); without a zone it is UTC, not the server's local time. */
const ISO = /^\d{4}-\d\d-\d\d(?:([T ])\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?(Z|[+-]\d\d:?\d\d)?$/;
/** RFC 2822 / HTTP dates: `Sun, 22 Nov 2026 01:04:59 GMT`, `22 Nov 2026 01:04:59 +0000`. */
const RFC_2822 = /^(?:[A-Za-z]{3}, )?\d{1,2} [A-Za-z]{3} \d{4} \d\d:\d\d(?::\d\d)? (?:GMT|UTC|[+-]\d{4})$/;

/** No honeypot event is older: an earlier time is a clock that was never set (1970). */
export const EARLIEST_EVENT_TS = Date.UTC(2000, 0, 1);
/** Clocks of nodes and Core differ by a few seconds; further ahead, an event's time is wrong or a lie. */
export const FUTURE_SLACK_MS = 5 * 60_000;

/**
 * True when an event's own time `ts` cannot stand for it: before 2000, more than
 * FUTURE_SLACK_MS after it was received, or older than `maxAgeMs` (retention, 0: no limit),
 * which would have it deleted at once. Such an event is stored at its receive time with what it
 * said kept in its data, so a honeypot cannot backdate what it sends (1970) or keep it forever
 * (9999) in retention, first and last seen, sessions and alerts. Older times within the
 * retention stand: a node that was cut off from Core for hours sends its spool afterwards.
 */
export function farOff(ts: number, receivedAt: number, maxAgeMs: number): boolean {
  return ts < EARLIEST_EVENT_TS || ts > receivedAt + FUTURE_SLACK_MS || (maxAgeMs > 0 && ts < receivedAt - maxAgeMs);
}

/**
 * Reads an event time: ISO 8601 or RFC 2822 text, or unix time as a number or numeric text in
 * seconds, milliseconds or microseconds (told apart by magnitude). Null when unreadable or
 * absurd. Only these forms: Date.parse alone reads nearly anything (`"x 1"` is 2001-01-01).
 */
export function parseTimestamp(v: unknown): number | null {
  let ms: number;
  if (typeof v === "number") ms = unixToMs(v);
  else if (typeof v === "string") {
    const fast = isoUtcFast(v, 0, v.length);
    if (fast !== null) ms = fast;
    else if (NUMERIC.test(v)) ms = unixToMs(Number(v));
    else {
      const iso = ISO.exec(v);
      if (iso) {
        let text = iso[1] === " " ? v.slice(0, 10) + "T" + v.slice(11) : v;
        if (iso[1] !== undefined && iso[2] === undefined) text += "Z";
        ms = Date.parse(text);
      } else if (RFC_2822.test(v)) ms = Date.parse(v);
      else return null;
    }
  } else return null;
  return sane(ms);
}

/**
 * `parseTimestamp` of the text `t[from, to)`, read where it stands when it has the common
 * form (see `isoUtcFast`): the ingest scanners leave an event's time in its line, since
 * cutting it out cost a string per event, and reading that new string cost the receiving
 * thread more than the reading itself (measured: see scan.ts, `ScannedTime`).
 */
export function parseTimestampIn(t: string, from: number, to: number): number | null {
  const fast = isoUtcFast(t, from, to);
  return fast !== null ? sane(fast) : parseTimestamp(t.slice(from, to));
}

function sane(ms: number): number | null {
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TS) return null;
  return Math.round(ms);
}

// Same idea for reading: `YYYY-MM-DDTHH:MM:SS[.fff...]Z` with the second of the previous
// event is read without Date.parse (~0.3 µs per event).
let parsedPrefix = "";
let parsedSecondMs = 0;

/** `v[from, to)` as `YYYY-MM-DDTHH:MM:SS[.fff...]Z`, in milliseconds; null when it is not that form. */
function isoUtcFast(v: string, from: number, to: number): number | null {
  const n = to - from;
  if (n < 20 || v.charCodeAt(to - 1) !== 90 /* Z */ || v.charCodeAt(from + 10) !== 84 /* T */) return null;
  // Compared in place: slicing the prefix of every event allocated a string per event.
  if (parsedPrefix.length !== 19 || !v.startsWith(parsedPrefix, from)) {
    const prefix = v.slice(from, from + 19);
    const base = Date.parse(prefix + "Z");
    if (!Number.isFinite(base)) return null;
    parsedPrefix = prefix;
    parsedSecondMs = base;
  }
  if (n === 20) return parsedSecondMs;
  if (v.charCodeAt(from + 19) !== 46 /* . */) return null;
  // Milliseconds from the first three digits; further digits are truncated, as Date.parse does.
  let ms = 0;
  for (let i = from + 20, scale = 100; i < to - 1; i++, scale /= 10) {
    const d = v.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    if (scale >= 1) ms += d * scale;
  }
  return parsedSecondMs + ms;
}

function unixToMs(n: number): number {
  if (n < SECONDS_LIMIT) return n * 1000;
  if (n < MICROS_LIMIT) return n;
  return n / 1000;
}
