/**
 * RESP, as a Redis 7 server reads and writes it. Requests come as RESP2 arrays of bulk strings or
 * as the inline form (`PING\r\n`, what nc, telnet and many scanners send); replies are encoded in
 * RESP2, or in RESP3 once a client has said `HELLO 3`. Parsing is stateless: it starts at the
 * front of the unparsed bytes each time, so a command split over any number of reads parses the
 * same, and every length is checked against its bound as soon as its header has arrived, before
 * the bytes it announces are waited for.
 */

/** Redis's PROTO_INLINE_MAX_SIZE: an inline line, or a `*`/`$` header, longer than this is refused. */
export const INLINE_MAX = 64 * 1024;

export interface Limits {
  /** Arguments in one command. */
  maxArgs: number;
  /** Bytes of one argument. */
  maxArgBytes: number;
  /** Bytes of all the arguments of one command. */
  maxCommandBytes: number;
  /** Redis 7 takes at most 10 arguments of 16 KiB from a client that still has to AUTH. */
  unauthenticated: boolean;
}

export type Parsed =
  /** `size`: bytes the command took from the front of the buffer. */
  | { kind: "command"; args: Buffer[]; inline: boolean; size: number }
  /** An empty inline line, `*0` or `*-1`: Redis reads past it without a reply. */
  | { kind: "skip"; size: number }
  | { kind: "incomplete" }
  /** Answered with `-ERR <message>`, then the connection is closed, as Redis does. */
  | { kind: "error"; message: string };

const CR = 0x0d;
const LF = 0x0a;

/** Redis finds line ends with strchr on its query buffer: a NUL byte hides everything after it. */
function findByte(buf: Buffer, byte: number, from: number): number {
  for (let i = from; i < buf.length; i++) {
    if (buf[i] === byte) return i;
    if (buf[i] === 0) return -1;
  }
  return -1;
}

/** Redis's string2ll: optional minus, no plus, no leading zeros, no spaces, within 64 bits. */
function toInteger(text: string): number | null {
  if (text.length === 0 || text.length > 20 || !/^-?(0|[1-9][0-9]*)$/.test(text)) return null;
  const n = BigInt(text);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return null;
  return Number(n);
}

export function parseCommand(buf: Buffer, limits: Limits): Parsed {
  if (buf.length === 0) return { kind: "incomplete" };
  return buf[0] === 0x2a ? parseMultibulk(buf, limits) : parseInline(buf);
}

function parseInline(buf: Buffer): Parsed {
  const newline = findByte(buf, LF, 0);
  if (newline === -1) {
    return buf.length > INLINE_MAX ? { kind: "error", message: "Protocol error: too big inline request" } : { kind: "incomplete" };
  }
  const end = newline > 0 && buf[newline - 1] === CR ? newline - 1 : newline;
  const args = splitArgs(buf.subarray(0, end));
  if (!args) return { kind: "error", message: "Protocol error: unbalanced quotes in request" };
  if (args.length === 0) return { kind: "skip", size: newline + 1 };
  return { kind: "command", args, inline: true, size: newline + 1 };
}

/** A `*N` or `$N` header line at `pos`: its number and where the next line starts. */
function header(buf: Buffer, pos: number): { value: number | null; next: number } | "incomplete" | "too-big" {
  const cr = findByte(buf, CR, pos);
  if (cr === -1) return buf.length - pos > INLINE_MAX ? "too-big" : "incomplete";
  // Redis waits for the byte after \r as well, without checking that it is \n.
  if (cr + 2 > buf.length) return "incomplete";
  return { value: toInteger(buf.toString("latin1", pos + 1, cr)), next: cr + 2 };
}

function parseMultibulk(buf: Buffer, limits: Limits): Parsed {
  const count = header(buf, 0);
  if (count === "incomplete") return { kind: "incomplete" };
  if (count === "too-big") return { kind: "error", message: "Protocol error: too big mbulk count string" };
  if (count.value === null || count.value > limits.maxArgs) return { kind: "error", message: "Protocol error: invalid multibulk length" };
  if (count.value > 10 && limits.unauthenticated) return { kind: "error", message: "Protocol error: unauthenticated multibulk length" };
  if (count.value <= 0) return { kind: "skip", size: count.next };
  const args: Buffer[] = [];
  let pos = count.next;
  let total = 0;
  while (args.length < count.value) {
    if (pos >= buf.length) return { kind: "incomplete" };
    const bulk = header(buf, pos);
    if (bulk === "incomplete") return { kind: "incomplete" };
    if (bulk === "too-big") return { kind: "error", message: "Protocol error: too big bulk count string" };
    if (buf[pos] !== 0x24) return { kind: "error", message: `Protocol error: expected '$', got '${sanitize(String.fromCharCode(buf[pos]!))}'` };
    const length = bulk.value;
    if (length === null || length < 0 || length > limits.maxArgBytes || total + length > limits.maxCommandBytes) {
      return { kind: "error", message: "Protocol error: invalid bulk length" };
    }
    if (length > 16384 && limits.unauthenticated) return { kind: "error", message: "Protocol error: unauthenticated bulk length" };
    // The two bytes after the data are skipped unread, as Redis does.
    if (bulk.next + length + 2 > buf.length) return { kind: "incomplete" };
    args.push(Buffer.from(buf.subarray(bulk.next, bulk.next + length)));
    total += length;
    pos = bulk.next + length + 2;
  }
  return { kind: "command", args, inline: false, size: pos };
}

const isSpace = (b: number | undefined) => b === 0x20 || (b !== undefined && b >= 0x09 && b <= 0x0d);
const isHex = (b: number | undefined) => b !== undefined && /^[0-9a-fA-F]$/.test(String.fromCharCode(b));
const ESCAPES: Record<string, number> = { n: 0x0a, r: 0x0d, t: 0x09, b: 0x08, a: 0x07 };

/**
 * Redis's sdssplitargs: words split on white space, "double quotes" with \n \r \t \b \a \xHH and
 * \<any> escapes, 'single quotes' with only \'. A closing quote must be followed by a space or
 * the end; an unterminated quote is an error (null). A NUL byte ends the line, as in C.
 */
export function splitArgs(line: Uint8Array): Buffer[] | null {
  const args: Buffer[] = [];
  let p = 0;
  const at = (i: number): number => (i < line.length ? line[i]! : 0);
  for (;;) {
    while (at(p) !== 0 && isSpace(at(p))) p++;
    if (at(p) === 0) return args;
    const current: number[] = [];
    let inDouble = false;
    let inSingle = false;
    let done = false;
    while (!done) {
      const c = at(p);
      if (inDouble) {
        if (c === 0x5c && at(p + 1) === 0x78 && isHex(at(p + 2)) && isHex(at(p + 3))) {
          current.push(Number.parseInt(String.fromCharCode(at(p + 2), at(p + 3)), 16));
          p += 3;
        } else if (c === 0x5c && at(p + 1) !== 0) {
          p++;
          const escaped = String.fromCharCode(at(p));
          current.push(ESCAPES[escaped] ?? at(p));
        } else if (c === 0x22) {
          if (at(p + 1) !== 0 && !isSpace(at(p + 1))) return null;
          done = true;
        } else if (c === 0) {
          return null;
        } else {
          current.push(c);
        }
      } else if (inSingle) {
        if (c === 0x5c && at(p + 1) === 0x27) {
          p++;
          current.push(0x27);
        } else if (c === 0x27) {
          if (at(p + 1) !== 0 && !isSpace(at(p + 1))) return null;
          done = true;
        } else if (c === 0) {
          return null;
        } else {
          current.push(c);
        }
      } else if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0) {
        done = true;
      } else if (c === 0x22) {
        inDouble = true;
      } else if (c === 0x27) {
        inSingle = true;
      } else {
        current.push(c);
      }
      if (at(p) !== 0) p++;
    }
    args.push(Buffer.from(current));
  }
}

/** A reply, before it is encoded for the client's protocol version. */
export type Reply =
  | { type: "simple"; value: string }
  /** The whole error line without the `-`, e.g. `ERR syntax error` or `NOAUTH Authentication required.` */
  | { type: "error"; value: string }
  | { type: "integer"; value: number }
  | { type: "bulk"; value: Uint8Array | string }
  /** A text blob: RESP3 sends it as verbatim `txt`, RESP2 as a bulk string (INFO, CLIENT LIST). */
  | { type: "verbatim"; value: string }
  /** RESP2 `$-1` (a missing key) or `*-1` (`array`), RESP3 `_` for both. */
  | { type: "null"; array?: boolean }
  | { type: "array"; items: Reply[] }
  /** RESP3 `%`, RESP2 a flat array of keys and values. */
  | { type: "map"; entries: Array<[Reply, Reply]> }
  /** RESP3 `~`, RESP2 an array. */
  | { type: "set"; items: Reply[] }
  /** RESP3 `,`, RESP2 a bulk string. */
  | { type: "double"; value: number }
  /** RESP3 `#t`/`#f`, RESP2 the integer 1/0. */
  | { type: "boolean"; value: boolean };

export const OK: Reply = { type: "simple", value: "OK" };
export const NIL: Reply = { type: "null" };
export const simple = (value: string): Reply => ({ type: "simple", value });
export const error = (value: string): Reply => ({ type: "error", value });
export const integer = (value: number): Reply => ({ type: "integer", value });
export const bulk = (value: Uint8Array | string): Reply => ({ type: "bulk", value });
export const array = (items: Reply[]): Reply => ({ type: "array", items });
export const bulks = (items: ReadonlyArray<Uint8Array | string>): Reply => array(items.map(bulk));
export const map = (entries: Array<[Reply, Reply]>): Reply => ({ type: "map", entries });
export const verbatim = (value: string): Reply => ({ type: "verbatim", value });

/** Errors and simple strings are one line: Redis maps \r and \n in them to spaces. */
function sanitize(text: string): string {
  return text.replace(/[\r\n]/g, " ");
}

function bulkBytes(value: Uint8Array | string): Buffer {
  return typeof value === "string" ? Buffer.from(value, "latin1") : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function formatDouble(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (!Number.isFinite(value)) return value > 0 ? "inf" : "-inf";
  return String(value);
}

/** Encodes a reply; strings are taken as Latin-1, byte for byte, since Redis values are bytes. */
export function encode(reply: Reply, resp: 2 | 3): Buffer {
  const parts: Buffer[] = [];
  write(reply, resp, parts);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

function write(reply: Reply, resp: 2 | 3, out: Buffer[]): void {
  const line = (text: string): void => {
    out.push(Buffer.from(`${text}\r\n`, "latin1"));
  };
  switch (reply.type) {
    case "simple":
      return line(`+${sanitize(reply.value)}`);
    case "error":
      return line(`-${sanitize(reply.value)}`);
    case "integer":
      return line(`:${Math.trunc(reply.value)}`);
    case "bulk": {
      const bytes = bulkBytes(reply.value);
      line(`$${bytes.length}`);
      out.push(bytes, Buffer.from("\r\n"));
      return;
    }
    case "verbatim": {
      const bytes = Buffer.from(reply.value, "latin1");
      if (resp === 2) return write(bulk(bytes), resp, out);
      line(`=${bytes.length + 4}`);
      out.push(Buffer.from("txt:"), bytes, Buffer.from("\r\n"));
      return;
    }
    case "null":
      return line(resp === 3 ? "_" : reply.array ? "*-1" : "$-1");
    case "array":
    case "set":
      line(`${reply.type === "set" && resp === 3 ? "~" : "*"}${reply.items.length}`);
      for (const item of reply.items) write(item, resp, out);
      return;
    case "map":
      line(resp === 3 ? `%${reply.entries.length}` : `*${reply.entries.length * 2}`);
      for (const [key, value] of reply.entries) {
        write(key, resp, out);
        write(value, resp, out);
      }
      return;
    case "double":
      return resp === 3 ? line(`,${formatDouble(reply.value)}`) : write(bulk(formatDouble(reply.value)), resp, out);
    case "boolean":
      return resp === 3 ? line(`#${reply.value ? "t" : "f"}`) : line(`:${reply.value ? 1 : 0}`);
  }
}
