/**
 * Newline-delimited JSON framing, tolerant of what existing peers send.
 *
 * - Lines end with "\n" (a trailing "\r" is trimmed).
 * - Some nodes write objects back to back with no newline (`{...}{...}`); splitting those is
 *   done only when a line fails to parse, so the hot path pays nothing for the tolerance.
 * - Every buffer is bounded: a peer that never sends a newline cannot make us hold more than
 *   `maxMessageBytes`; the oversized message is reported and skipped up to the next newline.
 * - With `objectEnds`, a JSON object is a message as soon as its closing brace arrives, newline
 *   or not: peers such as the upstream example node write `{...}` and wait for the answer. Only
 *   the unfinished tail of a chunk is scanned, each byte once (the scan state is kept).
 */

export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;

export interface LineSink {
  /**
   * One line. When `at` is not -1, `bytes[at...]` holds the line's bytes one per character
   * (the line is ASCII), valid only during the call: a receiver may copy from there rather
   * than encode the text again.
   */
  line(text: string, bytes: Buffer, at: number): void;
  /** Called once per oversized message, with the bytes seen so far (at least the limit). */
  oversized(bytes: number): void;
}

export interface LineSplitterOptions {
  /** Emit a top-level JSON object as soon as it is complete, without waiting for its newline. */
  objectEnds?: boolean;
}

export class LineSplitter {
  private rest: Buffer | null = null;
  /** True while discarding the tail of an oversized message up to its newline. */
  private skipping = false;
  private skipped = 0;
  private readonly objectEnds: boolean;
  /** Scan of the unfinished line for `objectEnds`: bytes of `rest` scanned, and where the scan is. */
  private scanned = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The unfinished line is not a sequence of objects: wait for its newline. */
  private scanOff = false;

  constructor(
    private readonly maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES,
    options: LineSplitterOptions = {},
  ) {
    this.objectEnds = options.objectEnds === true;
  }

  /** Bytes held for an unfinished line. */
  get pendingBytes(): number {
    return this.rest?.length ?? 0;
  }

  push(chunk: Uint8Array, sink: LineSink): void {
    // Sockets hand over Buffers; reading `.buffer` of one makes JavaScriptCore copy its memory.
    const buf = chunk instanceof Buffer ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
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
      // Only the unfinished line is joined with the head of the chunk, not the whole chunk.
      const nl = buf.indexOf(10);
      if (nl < 0) {
        this.hold(Buffer.concat([this.rest, buf]), true, sink);
        return;
      }
      const line = Buffer.concat([this.rest, buf.subarray(0, nl)]);
      this.rest = null;
      this.resetScan();
      this.linesOf(line, 0, line.length, sink);
      start = nl + 1;
    }
    const last = buf.lastIndexOf(10);
    if (last >= start) {
      this.linesOf(buf, start, last, sink);
      start = last + 1;
      this.resetScan();
    }
    if (start < buf.length) this.hold(buf.subarray(start), false, sink);
  }

  private resetScan(): void {
    this.scanned = 0;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.scanOff = false;
  }

  /**
   * Emits the objects completed in `tail` (an unfinished line) and returns what is left of it.
   * Scanning starts where the previous call stopped, so a slow peer costs each byte once.
   */
  private emitObjects(tail: Buffer, sink: LineSink): Buffer {
    let from = 0;
    let begin = -1;
    let i = this.scanned;
    for (; i < tail.length && !this.scanOff; i++) {
      const c = tail[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 92) this.escaped = true;
        else if (c === 34) this.inString = false;
      } else if (c === 34) {
        if (this.depth === 0) this.scanOff = true;
        else this.inString = true;
      } else if (c === 123 || c === 91) {
        if (this.depth === 0 && c === 91) this.scanOff = true;
        else if (this.depth++ === 0) begin = i;
      } else if (c === 125 || c === 93) {
        if (this.depth === 0) this.scanOff = true;
        else if (--this.depth === 0) {
          // The object began in this tail: `from` only moves past whole objects.
          if (begin < 0) begin = from + firstNonSpace(tail, from);
          sink.line(tail.toString("utf8", begin, i + 1), tail, -1);
          from = i + 1;
          begin = -1;
        }
      } else if (this.depth === 0 && c !== 32 && c !== 9 && c !== 13) {
        this.scanOff = true;
      }
    }
    // Blanks after a complete object belong to no message.
    if (from > 0) from += Math.min(firstNonSpace(tail, from), i - from);
    this.scanned = i - from;
    return from === 0 ? tail : tail.subarray(from);
  }

  /**
   * Emits the lines of `buf[start, end)` (newline-separated, no final newline). The common
   * case, a range no longer than the limit, is decoded once and split as text: decoding each
   * line on its own costs more than the rest of the framing together (measured).
   */
  private linesOf(buf: Buffer, start: number, end: number, sink: LineSink): void {
    if (end - start > this.maxMessageBytes) return this.linesChecked(buf, start, end, sink);
    const text = buf.toString("utf8", start, end);
    const ascii = text.length === end - start;
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      const to = nl < 0 ? text.length : nl;
      const trimmed = to > from && text.charCodeAt(to - 1) === 13 ? to - 1 : to;
      if (trimmed > from) sink.line(text.slice(from, trimmed), buf, ascii ? start + from : -1);
      if (nl < 0) return;
      from = nl + 1;
    }
  }

  /** Like `linesOf`, measuring each line in bytes against the limit. */
  private linesChecked(buf: Buffer, start: number, end: number, sink: LineSink): void {
    while (start <= end) {
      let nl = buf.indexOf(10, start);
      if (nl < 0 || nl > end) nl = end;
      const len = nl - start;
      if (len > this.maxMessageBytes) sink.oversized(len);
      else if (len > 0) this.linesOf(buf, start, nl, sink);
      start = nl + 1;
    }
  }

  /** Keeps an unfinished line for the next chunk; copied unless `owned` (the chunk's memory belongs to the socket). */
  private hold(tail: Buffer, owned: boolean, sink: LineSink): void {
    if (this.objectEnds) {
      tail = this.emitObjects(tail, sink);
      if (tail.length === 0) {
        this.rest = null;
        return;
      }
    }
    if (tail.length > this.maxMessageBytes) {
      this.rest = null;
      this.resetScan();
      this.skipping = true;
      this.skipped = tail.length;
      return;
    }
    this.rest = owned ? tail : Buffer.from(tail);
  }

  /** Returns the unterminated tail (a peer may close without a final newline). */
  end(sink: LineSink): void {
    if (this.skipping) sink.oversized(this.skipped);
    else if (this.rest && firstNonSpace(this.rest, 0) < this.rest.length) sink.line(this.rest.toString("utf8").replace(/\r$/, ""), this.rest, -1);
    this.rest = null;
    this.skipping = false;
    this.resetScan();
  }
}

/** Offset, from `at`, of the first byte of `buf` that is not a space, tab or CR. */
function firstNonSpace(buf: Buffer, at: number): number {
  let i = at;
  while (i < buf.length && (buf[i] === 32 || buf[i] === 9 || buf[i] === 13)) i++;
  return i - at;
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
