/**
 * Cowrie's binary tty logs as asciicast v2, so that Core keeps and serves one format whichever
 * Cowrie made the recording (the built-in one writes asciicast itself). Pure: bytes in, bytes
 * out, tested without files or sockets.
 *
 * A tty log (cowrie/core/ttylog.py) is a run of records, each a 24-byte little-endian header,
 * struct `<iLiiLL`: op (int32: 1 open, 2 close, 3 write, 4 exec), tty (uint32), length (int32),
 * direction (int32, for writes: 1 input, 2 output, 3 interact), sec and usec (uint32) of the
 * record's time; then `length` bytes of data. Output becomes `"o"` events and input `"i"`
 * events, at their time since the first record. Interact writes (an operator typing through
 * Cowrie's interact port) and exec records are not the attacker's terminal and are left out.
 * The file has no terminal size: the header says 80x24, Cowrie's own default.
 */

const HEADER_BYTES = 24;
const OP_OPEN = 1;
const OP_CLOSE = 2;
const OP_WRITE = 3;
const OP_EXEC = 4;
const TYPE_INPUT = 1;
const TYPE_OUTPUT = 2;

export type RecordingFormat = "asciicast" | "ttylog";

/**
 * What a recording's first bytes say it is: asciicast opens with its JSON header (`{`), a tty
 * log with a record header whose op is 1-4 (an int32 below 256, so its other three bytes are 0).
 */
export function recordingFormat(head: Uint8Array): RecordingFormat | null {
  if (head[0] === 0x7b) return "asciicast";
  if (head.length >= HEADER_BYTES && head[0]! >= OP_OPEN && head[0]! <= OP_EXEC && head[1] === 0 && head[2] === 0 && head[3] === 0) return "ttylog";
  return null;
}

export class TtylogError extends Error {}

export interface CastOptions {
  /** Largest asciicast made: events past it are left out (the cast stays valid, only shorter). */
  maxBytes: number;
  /**
   * The bytes are only the start of the file (the reader stopped at its bound): a record cut
   * off at their end ends the cast there instead of making the file damaged.
   */
  partial?: boolean;
}

export interface CastResult {
  cast: Buffer;
  /** Output and input events written. */
  events: number;
  /** Something was left out: maxBytes reached, or a partial file's end. */
  truncated: boolean;
}

export function ttylogToCast(bytes: Uint8Array, opts: CastOptions): CastResult {
  if (recordingFormat(bytes) !== "ttylog") throw new TtylogError(`not a Cowrie tty log: its first ${Math.min(bytes.length, HEADER_BYTES)} bytes are not a record header with an operation 1-4`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Text split across two writes (a UTF-8 character in halves) is joined: one decoder per direction.
  const decoders = { o: new TextDecoder("utf-8"), i: new TextDecoder("utf-8") };
  let start: number | null = null;
  let last = 0;
  const out: string[] = [];
  let size = 0;
  let events = 0;
  let truncated = false;

  const add = (line: string): boolean => {
    const n = Buffer.byteLength(line);
    if (size + n > opts.maxBytes) return false;
    out.push(line);
    size += n;
    return true;
  };

  const emit = (micros: number, kind: "o" | "i", text: string): boolean => {
    if (text === "") return true;
    // Never backwards (a clock set back during the session): asciicast times only grow.
    last = Math.max(last, Math.round(micros - start!) / 1e6);
    if (!add(`${JSON.stringify([last, kind, text])}\n`)) return false;
    events++;
    return true;
  };

  let offset = 0;
  while (offset < bytes.length) {
    const left = bytes.length - offset;
    if (left < HEADER_BYTES) {
      if (opts.partial) {
        truncated = true;
        break;
      }
      throw new TtylogError(`cut off: ${left} bytes at offset ${offset} are less than a record header (${HEADER_BYTES} bytes)`);
    }
    const op = view.getInt32(offset, true);
    const length = view.getInt32(offset + 8, true);
    const direction = view.getInt32(offset + 12, true);
    const sec = view.getUint32(offset + 16, true);
    const usec = view.getUint32(offset + 20, true);
    if (op < OP_OPEN || op > OP_EXEC) throw new TtylogError(`damaged: the record at offset ${offset} has operation ${op}, not 1-4`);
    if (length < 0) throw new TtylogError(`damaged: the record at offset ${offset} has a negative length ${length}`);
    if (usec > 999_999) throw new TtylogError(`damaged: the record at offset ${offset} has ${usec} microseconds`);
    const micros = sec * 1e6 + usec;
    if (start === null) {
      start = micros;
      add(`${JSON.stringify({ version: 2, width: 80, height: 24, timestamp: sec })}\n`);
    }
    const end = offset + HEADER_BYTES + length;
    if (end > bytes.length) {
      if (opts.partial) {
        truncated = true;
        break;
      }
      throw new TtylogError(`cut off: the record at offset ${offset} announces ${length} bytes of data, ${bytes.length - offset - HEADER_BYTES} follow`);
    }
    if (op === OP_CLOSE) break;
    if (op === OP_WRITE && (direction === TYPE_OUTPUT || direction === TYPE_INPUT)) {
      const kind = direction === TYPE_OUTPUT ? "o" : "i";
      if (!emit(micros, kind, decoders[kind].decode(bytes.subarray(offset + HEADER_BYTES, end), { stream: true }))) {
        truncated = true;
        break;
      }
    }
    offset = end;
  }
  // A character left in halves at the end shows as U+FFFD rather than vanishing.
  if (!truncated) for (const kind of ["o", "i"] as const) if (!emit(last * 1e6 + start!, kind, decoders[kind].decode())) truncated = true;
  return { cast: Buffer.from(out.join("")), events, truncated };
}
