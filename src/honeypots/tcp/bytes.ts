/**
 * Reading a few fields out of a client's first bytes without trusting any of them: every read
 * is bounds-checked and answers -1 (a number) or null past the end, so a signature written with
 * these never throws on a short or lying capture.
 */
import { printable } from "../shared/session.ts";

/** What one signature adds to a tcp.payload event: flat fields, every string already printable. */
export type GuessFields = Record<string, string | number | boolean | string[] | null>;

export interface Signature {
  /** The event's `protocol_guess` when it matches. */
  name: string;
  /** null: not this protocol; fields (maybe none): it is. */
  match(bytes: Buffer): GuessFields | null;
}

/** Longest string a guess copies from the bytes into its event. */
export const FIELD_MAX = 256;

export const u8 = (b: Uint8Array, at: number): number => (at >= 0 && at < b.length ? b[at]! : -1);
export const u16be = (b: Uint8Array, at: number): number => (at >= 0 && at + 2 <= b.length ? (b[at]! << 8) | b[at + 1]! : -1);
export const u16le = (b: Uint8Array, at: number): number => (at >= 0 && at + 2 <= b.length ? b[at]! | (b[at + 1]! << 8) : -1);
export const u32be = (b: Uint8Array, at: number): number => (at >= 0 && at + 4 <= b.length ? b[at]! * 0x1000000 + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) : -1);
export const u32le = (b: Uint8Array, at: number): number => (at >= 0 && at + 4 <= b.length ? b[at + 3]! * 0x1000000 + ((b[at + 2]! << 16) | (b[at + 1]! << 8) | b[at]!) : -1);

/** True when the bytes at `at` are exactly `prefix` (a string is compared byte for byte, Latin-1). */
export function has(b: Uint8Array, prefix: string | readonly number[], at = 0): boolean {
  const n = prefix.length;
  if (at < 0 || at + n > b.length) return false;
  for (let i = 0; i < n; i++) {
    const want = typeof prefix === "string" ? prefix.charCodeAt(i) : prefix[i];
    if (b[at + i] !== want) return false;
  }
  return true;
}

/** A piece of the bytes as an event shows it: printable, at most `max` bytes of it. */
export function shown(b: Uint8Array, start = 0, end = b.length, max = FIELD_MAX): string {
  const from = Math.max(0, start);
  return printable(b.subarray(from, Math.min(end, b.length, from + max)));
}

/** Index of the first `byte` at or after `from`, -1 when there is none before `limit`. */
export function find(b: Uint8Array, byte: number, from: number, limit = b.length): number {
  const end = Math.min(limit, b.length);
  for (let i = Math.max(0, from); i < end; i++) if (b[i] === byte) return i;
  return -1;
}

/** A NUL-terminated string from `at`; null when no NUL ends it within `max` bytes. */
export function cstring(b: Uint8Array, at: number, max = FIELD_MAX): { value: string; end: number } | null {
  const nul = find(b, 0, at, at + max + 1);
  return nul < 0 ? null : { value: shown(b, at, nul), end: nul + 1 };
}

/**
 * The lines of a text protocol's head (request line, then headers up to the blank line), as
 * Latin-1, each without its line end; at most `maxLines` lines and `maxBytes` bytes read. The
 * last line may be incomplete when the capture stops within it: `complete` says whether the
 * first line had its end.
 */
export function headLines(b: Uint8Array, maxLines = 64, maxBytes = 8192): { lines: string[]; complete: boolean } {
  const text = Buffer.from(b.buffer, b.byteOffset, Math.min(b.length, maxBytes)).toString("latin1");
  const lines: string[] = [];
  let at = 0;
  let complete = false;
  while (lines.length < maxLines && at < text.length) {
    const nl = text.indexOf("\n", at);
    if (nl < 0) {
      lines.push(text.slice(at));
      break;
    }
    const line = text.slice(at, nl > at && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl);
    if (lines.length === 0) complete = true;
    if (line === "" && lines.length > 0) break;
    lines.push(line);
    at = nl + 1;
  }
  return { lines, complete };
}

/** The value of the first header `name` (case-insensitive) among head lines, printable and clipped; null without one. */
export function header(lines: string[], name: string): string | null {
  const lower = `${name.toLowerCase()}:`;
  for (const line of lines.slice(1)) {
    if (line.slice(0, lower.length).toLowerCase() === lower) return shown(Buffer.from(line.slice(lower.length).trim(), "latin1"));
  }
  return null;
}

/** A Latin-1 string from the head lines, as an event shows it. */
export const text = (s: string, max = FIELD_MAX): string => shown(Buffer.from(s, "latin1"), 0, s.length, max);
