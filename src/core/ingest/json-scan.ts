/**
 * The pieces both fast-path scanners (scan.ts for flat lines, scan-envelope.ts for Protocol v2
 * envelopes) read JSON with: validating skips over strings, numbers and nested values that
 * never build an object, and a cache of recent short values. Each follows JSON's grammar
 * exactly; a test checks the scanners against JSON.parse on generated and mutated lines.
 */

/**
 * The recent values of a field with few distinct values (event types, pots): a repeat gets
 * the same string as before, found by comparing in place. A fresh slice per event cost more
 * than the rest of the scan together once it was used as a Map key (measured: hashing a
 * slice copies it first).
 */
export class Recent {
  private readonly values: string[] = [];
  private next = 0;

  of(t: string, from: number, to: number): string {
    const len = to - from;
    for (const v of this.values) if (v.length === len && t.startsWith(v, from)) return v;
    const v = t.slice(from, to);
    if (this.values.length < 16) this.values.push(v);
    else {
      this.values[this.next] = v;
      this.next = (this.next + 1) % 16;
    }
    return v;
  }
}

/** Deeper nesting (levels, the line itself is 1) is left to the general path (and keeps this recursion shallow). */
export const MAX_LEVELS = 33;

/**
 * `t[i]` opens an object or array: validates it (JSON's grammar) and returns the index just
 * past its end, -1 when invalid or when it (at `level`) or its contents go deeper than `levels`.
 */
export function skipNested(t: string, i: number, level: number, levels: number): number {
  if (level > levels) return -1;
  const isObject = t.charCodeAt(i) === 123;
  const close = isObject ? 125 : 93;
  i = skipSpace(t, i + 1);
  if (t.charCodeAt(i) === close) return i + 1;
  for (;;) {
    if (isObject) {
      if (t.charCodeAt(i) !== 34) return -1;
      i = skipString(t, i);
      if (i < 0) return -1;
      i = skipSpace(t, i);
      if (t.charCodeAt(i) !== 58) return -1;
      i = skipSpace(t, i + 1);
    }
    const c = t.charCodeAt(i);
    if (c === 34) i = skipString(t, i);
    else if (c === 45 || isDigit(c)) i = skipNumber(t, i);
    else if (c === 123 || c === 91) i = skipNested(t, i, level + 1, levels);
    else if (t.startsWith("null", i) || t.startsWith("true", i)) i += 4;
    else if (t.startsWith("false", i)) i += 5;
    else return -1;
    if (i < 0) return -1;
    i = skipSpace(t, i);
    const d = t.charCodeAt(i);
    if (d === close) return i + 1;
    if (d !== 44) return -1;
    i = skipSpace(t, i + 1);
  }
}

/**
 * Most lines hold no backslash (no string has an escape) and no control character (none may
 * stand raw in a string, and compact JSON has no tabs or newlines between tokens). In such a
 * line a string ends at the next quote, which `indexOf` finds natively, and there are no
 * escapes to check. Measured on the bench's events, the check included: the flat scan 0.85 ->
 * 0.60 µs per line, the envelope scan 1.07 -> 0.86. `startLine` decides it for a line: call
 * it before any of the skips below (both scanners do, first thing); other lines are read
 * character by character.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const NOT_PLAIN = /[\u0000-\u001f\\]/;
let plain = false;

export function startLine(t: string): void {
  plain = !NOT_PLAIN.test(t);
}

/** `t[i]` opens a key: returns the index of its closing quote, -1 when invalid or for a key with escapes. */
export function keyEnd(t: string, i: number): number {
  if (t.charCodeAt(i) !== 34) return -1;
  if (plain) return t.indexOf('"', i + 1);
  for (let k = i + 1, n = t.length; k < n; k++) {
    const c = t.charCodeAt(k);
    if (c === 34) return k;
    if (c === 92 || c < 32) return -1;
  }
  return -1;
}

/** `t[i]` opens a string: returns the index just past its closing quote, -1 when invalid. */
export function skipString(t: string, i: number): number {
  if (plain) {
    const q = t.indexOf('"', i + 1);
    return q < 0 ? -1 : q + 1;
  }
  const n = t.length;
  for (i++; i < n; i++) {
    const c = t.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c < 32) return -1;
    if (c === 92) {
      i = skipEscape(t, i);
      if (i < 0) return -1;
    }
  }
  return -1;
}

// Every read stays within the string: `charCodeAt` past the end returns NaN through a slow
// path that made the whole scan 2.5x slower (measured).
export function skipSpace(t: string, i: number): number {
  const n = t.length;
  while (i < n) {
    const c = t.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return i;
    i++;
  }
  return i;
}

/** `t[i]` is a backslash: returns the index of the escape's last character, -1 when invalid. */
function skipEscape(t: string, i: number): number {
  const c = t.charCodeAt(i + 1);
  switch (c) {
    case 34:
    case 92:
    case 47:
    case 98:
    case 102:
    case 110:
    case 114:
    case 116:
      return i + 1;
    case 117: // \uXXXX
      for (let k = 2; k < 6; k++) if (!isHex(t.charCodeAt(i + k))) return -1;
      return i + 5;
    default:
      return -1;
  }
}

const isHex = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** JSON's number grammar: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?. Returns the end, -1 when invalid. */
export function skipNumber(t: string, i: number): number {
  if (t.charCodeAt(i) === 45) i++;
  let c = t.charCodeAt(i);
  if (c === 48) i++;
  else if (c >= 49 && c <= 57) while (isDigit(t.charCodeAt(i))) i++;
  else return -1;
  if (t.charCodeAt(i) === 46) {
    i++;
    if (!isDigit(t.charCodeAt(i))) return -1;
    while (isDigit(t.charCodeAt(i))) i++;
  }
  c = t.charCodeAt(i);
  if (c === 101 || c === 69) {
    i++;
    c = t.charCodeAt(i);
    if (c === 43 || c === 45) i++;
    if (!isDigit(t.charCodeAt(i))) return -1;
    while (isDigit(t.charCodeAt(i))) i++;
  }
  return i;
}

export function hasBackslash(t: string, from: number, to: number): boolean {
  if (plain) return false;
  for (let i = from; i < to; i++) if (t.charCodeAt(i) === 92) return true;
  return false;
}

export function isDigits(t: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isDigit(t.charCodeAt(i))) return false;
  return to > from;
}
