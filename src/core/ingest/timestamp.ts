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

/**
 * Reads an event time: ISO 8601 or RFC 2822 text, or unix time as a number or numeric text in
 * seconds, milliseconds or microseconds (told apart by magnitude). Null when unreadable or
 * absurd. Only these forms: Date.parse alone reads nearly anything (`"x 1"` is 2001-01-01).
 */
export function parseTimestamp(v: unknown): number | null {
  let ms: number;
  if (typeof v === "number") ms = unixToMs(v);
  else if (typeof v === "string") {
    const fast = isoUtcFast(v);
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
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_TS) return null;
  return Math.round(ms);
}

// Same idea for reading: `YYYY-MM-DDTHH:MM:SS[.fff...]Z` with the second of the previous
// event is read without Date.parse (~0.3 µs per event).
let parsedPrefix = "";
let parsedSecondMs = 0;

function isoUtcFast(v: string): number | null {
  const n = v.length;
  if (n < 20 || v.charCodeAt(n - 1) !== 90 /* Z */ || v.charCodeAt(10) !== 84 /* T */) return null;
  // Compared in place: slicing the prefix of every event allocated a string per event.
  if (parsedPrefix.length !== 19 || !v.startsWith(parsedPrefix)) {
    const prefix = v.slice(0, 19);
    const base = Date.parse(prefix + "Z");
    if (!Number.isFinite(base)) return null;
    parsedPrefix = prefix;
    parsedSecondMs = base;
  }
  if (n === 20) return parsedSecondMs;
  if (v.charCodeAt(19) !== 46 /* . */) return null;
  // Milliseconds from the first three digits; further digits are truncated, as Date.parse does.
  let ms = 0;
  for (let i = 20, scale = 100; i < n - 1; i++, scale /= 10) {
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
