/**
 * How captured Redis arguments appear in events: printable text (bytes outside printable ASCII
 * as `\xNN`, shared/session.ts printable), each field bounded so one 512 KB argument cannot make
 * a 2 MB event line. What was cut is said with `truncated: true` on the event.
 */
import { printable } from "../shared/session.ts";

/** Bytes of one argument kept in `args` and similar lists. */
export const ARG_BYTES = 1024;
/** Arguments kept in `args`. */
export const MAX_ARGS = 32;
/** Characters of `input`, the whole command line. */
export const INPUT_CHARS = 4096;

export interface Clipped<T> {
  value: T;
  truncated: boolean;
}

/** The first `max` bytes as printable text. */
export function clip(bytes: Uint8Array, max: number): Clipped<string> {
  return { value: printable(bytes.subarray(0, max)), truncated: bytes.length > max };
}

/** At most `count` arguments, each clipped to `bytes`. */
export function clipList(args: readonly Uint8Array[], count = MAX_ARGS, bytes = ARG_BYTES): Clipped<string[]> {
  const items = args.slice(0, count).map((a) => clip(a, bytes));
  return { value: items.map((i) => i.value), truncated: args.length > count || items.some((i) => i.truncated) };
}

/**
 * The command as one line, the way redis-cli would take it back: words that are plain printable
 * text as they are; others (empty, with a space, a quote or an escaped byte) in double quotes, a
 * quote inside as \x22; bounded to INPUT_CHARS.
 */
export function renderCommand(args: readonly Uint8Array[]): Clipped<string> {
  let line = "";
  let truncated = false;
  for (const arg of args) {
    const text = printable(arg.subarray(0, INPUT_CHARS));
    const word = /^[\x21\x23-\x26\x28-\x5b\x5d-\x7e]+$/.test(text) ? text : `"${text.replaceAll('"', "\\x22")}"`;
    line += line ? ` ${word}` : word;
    if (line.length > INPUT_CHARS || arg.length > INPUT_CHARS) {
      truncated = true;
      break;
    }
  }
  return { value: line.slice(0, INPUT_CHARS), truncated };
}
