/**
 * Newline-delimited JSON framing, tolerant of what existing peers send.
 *
 * - Lines end with "\n" (a trailing "\r" is trimmed).
 * - Some nodes write objects back to back with no newline (`{...}{...}`); splitting those is
 *   done only when a line fails to parse, so the hot path pays nothing for the tolerance.
 * - Every buffer is bounded: a peer that never sends a newline cannot make us hold more than
 *   `maxMessageBytes`; the oversized message is reported and skipped up to the next newline.
 */

export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

export interface LineSink {
  line(text: string): void;
  /** Called once per oversized message, with the bytes seen so far (at least the limit). */
  oversized(bytes: number): void;
}

export class LineSplitter {
  private rest: Buffer | null = null;
  /** True while discarding the tail of an oversized message up to its newline. */
  private skipping = false;
  private skipped = 0;

  constructor(private readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES) {}

  /** Bytes held for an unfinished line. */
  get pendingBytes(): number {
    return this.rest?.length ?? 0;
  }

  push(chunk: Uint8Array, sink: LineSink): void {
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    if (this.skipping) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        this.skipped += buf.length;
        return;
      }
      this.skipping = false;
      sink.oversized(this.skipped + nl);
      start = nl + 1;
    } else if (this.rest) {
      buf = Buffer.concat([this.rest, buf]);
      this.rest = null;
    }
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      const len = nl - start;
      if (len > this.maxMessageBytes) sink.oversized(len);
      else if (len > 0) {
        const end = buf[nl - 1] === 13 ? nl - 1 : nl;
        if (end > start) sink.line(buf.toString("utf8", start, end));
      }
      start = nl + 1;
    }
    const left = buf.length - start;
    if (left === 0) return;
    if (left > this.maxMessageBytes) {
      this.skipping = true;
      this.skipped = left;
      return;
    }
    // Copy: the chunk's memory belongs to the socket and may be reused.
    this.rest = Buffer.from(buf.subarray(start));
  }

  /** Returns the unterminated tail (a peer may close without a final newline). */
  end(sink: LineSink): void {
    if (this.skipping) sink.oversized(this.skipped);
    else if (this.rest && this.rest.length > 0) sink.line(this.rest.toString("utf8").replace(/\r$/, ""));
    this.rest = null;
    this.skipping = false;
  }
}

/**
 * Splits `{"a":1}{"b":2}` (objects with nothing or only whitespace between them) into its
 * objects. Returns null when the text is not a sequence of complete top-level objects.
 */
export function splitConcatenated(text: string): string[] | null {
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let begin = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (escaped) escaped = false;
      else if (c === 92) escaped = true;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) {
      if (depth === 0) return null;
      inString = true;
    } else if (c === 123 || c === 91) {
      if (depth === 0) {
        if (c === 91) return null;
        begin = i;
      }
      depth++;
    } else if (c === 125 || c === 93) {
      depth--;
      if (depth < 0) return null;
      if (depth === 0) out.push(text.slice(begin, i + 1));
    } else if (depth === 0 && c !== 32 && c !== 9 && c !== 13 && c !== 10) {
      return null;
    }
  }
  return depth === 0 && out.length > 0 ? out : null;
}
