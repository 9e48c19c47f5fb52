/**
 * MySQL's client/server protocol as a MySQL 8.0 server speaks it, without sockets: packet
 * framing, the v10 handshake, the client's HandshakeResponse41, authentication packets, OK / ERR /
 * EOF, text result sets and the commands a client sends. Decoders throw DecodeError on anything
 * short or malformed; the connection turns that into the error a server sends, never a crash.
 */

/** Capability flags (include/mysql_com.h). */
export const CLIENT = {
  LONG_PASSWORD: 0x1,
  FOUND_ROWS: 0x2,
  LONG_FLAG: 0x4,
  CONNECT_WITH_DB: 0x8,
  NO_SCHEMA: 0x10,
  COMPRESS: 0x20,
  ODBC: 0x40,
  LOCAL_FILES: 0x80,
  IGNORE_SPACE: 0x100,
  PROTOCOL_41: 0x200,
  INTERACTIVE: 0x400,
  SSL: 0x800,
  IGNORE_SIGPIPE: 0x1000,
  TRANSACTIONS: 0x2000,
  RESERVED: 0x4000,
  SECURE_CONNECTION: 0x8000,
  MULTI_STATEMENTS: 0x10000,
  MULTI_RESULTS: 0x20000,
  PS_MULTI_RESULTS: 0x40000,
  PLUGIN_AUTH: 0x80000,
  CONNECT_ATTRS: 0x100000,
  PLUGIN_AUTH_LENENC_CLIENT_DATA: 0x200000,
  CAN_HANDLE_EXPIRED_PASSWORDS: 0x400000,
  SESSION_TRACK: 0x800000,
  DEPRECATE_EOF: 0x1000000,
} as const;

/**
 * What a MySQL 8.0 server offers, less what this one does not implement: no CLIENT_SSL (clients
 * then log in in the clear, which is what a honeypot wants to see), no compression, no query
 * attributes or optional result set metadata (both change the shape of later packets).
 */
export const SERVER_CAPABILITIES =
  Object.values(CLIENT).reduce((all, flag) => all | flag, 0) & ~(CLIENT.SSL | CLIENT.COMPRESS);

export const SERVER_STATUS = { AUTOCOMMIT: 0x2, MORE_RESULTS_EXISTS: 0x8 } as const;

/** utf8mb4_0900_ai_ci, MySQL 8.0's default collation; 63 is `binary`, what numbers are sent in. */
export const UTF8MB4 = 255;
export const BINARY = 63;

export const COM = {
  QUIT: 0x01,
  INIT_DB: 0x02,
  QUERY: 0x03,
  FIELD_LIST: 0x04,
  STATISTICS: 0x09,
  PING: 0x0e,
  CHANGE_USER: 0x11,
  STMT_PREPARE: 0x16,
  RESET_CONNECTION: 0x1f,
} as const;

/** Column types of the text protocol this server sends (enum_field_types). */
export const TYPE = { LONGLONG: 8, DATETIME: 12, VAR_STRING: 253, BLOB: 252 } as const;

export class DecodeError extends Error {}

export interface Packet {
  seq: number;
  payload: Buffer;
}

export const HEADER_BYTES = 4;

/**
 * Whole packets at the front of `bytes`. A header announcing more than `max` bytes sets `tooLong`
 * at once, before its payload arrives: the peer is cut off rather than buffered (a payload of
 * 0xffffff, the continuation marker of 16 MiB messages, always is, as no limit reaches it).
 */
export function readPackets(bytes: Uint8Array, max: number): { packets: Packet[]; used: number; tooLong: boolean } {
  const packets: Packet[] = [];
  let pos = 0;
  while (bytes.length - pos >= HEADER_BYTES) {
    const length = bytes[pos]! | (bytes[pos + 1]! << 8) | (bytes[pos + 2]! << 16);
    if (length > max) return { packets, used: pos, tooLong: true };
    if (bytes.length - pos - HEADER_BYTES < length) break;
    const start = pos + HEADER_BYTES;
    packets.push({ seq: bytes[pos + 3]!, payload: Buffer.from(bytes.subarray(start, start + length)) });
    pos = start + length;
  }
  return { packets, used: pos, tooLong: false };
}

export function frame(seq: number, payload: Uint8Array): Buffer {
  const header = Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, (payload.length >> 16) & 0xff, seq & 0xff]);
  return Buffer.concat([header, payload]);
}

/** A cursor over one payload; every read past its end throws DecodeError. */
export class Reader {
  pos = 0;

  constructor(readonly buf: Buffer) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  private need(n: number): void {
    if (n < 0 || this.pos + n > this.buf.length) throw new DecodeError(`packet too short: need ${n} bytes at ${this.pos} of ${this.buf.length}`);
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16LE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  bytes(n: number): Buffer {
    this.need(n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** A length-encoded integer; 0xfb (NULL in a row) and 0xff are not integers here. */
  lenenc(): number {
    const first = this.u8();
    if (first < 0xfb) return first;
    if (first === 0xfc) return this.u16();
    if (first === 0xfd) {
      const lo = this.u16();
      return lo | (this.u8() << 16);
    }
    if (first === 0xfe) {
      this.need(8);
      const v = this.buf.readBigUInt64LE(this.pos);
      this.pos += 8;
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new DecodeError("length-encoded integer out of range");
      return Number(v);
    }
    throw new DecodeError(`bad length-encoded integer prefix 0x${first.toString(16)}`);
  }

  lenencBytes(): Buffer {
    return this.bytes(this.lenenc());
  }

  /** Bytes up to a NUL (consumed); without one, the rest of the payload. */
  nulBytes(): Buffer {
    const end = this.buf.indexOf(0, this.pos);
    const out = this.buf.subarray(this.pos, end === -1 ? this.buf.length : end);
    this.pos = end === -1 ? this.buf.length : end + 1;
    return out;
  }

  rest(): Buffer {
    return this.bytes(this.remaining);
  }
}

/** Captured names and attributes: UTF-8 as clients send them, invalid bytes replaced. */
export function text(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: false }).decode(bytes);
}

export function u16(v: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v & 0xffff);
  return b;
}

export function u32(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v >>> 0);
  return b;
}

export function lenencInt(n: number): Buffer {
  if (n < 0xfb) return Buffer.from([n]);
  if (n < 0x10000) return Buffer.concat([Buffer.from([0xfc]), u16(n)]);
  if (n < 0x1000000) return Buffer.from([0xfd, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);
  const b = Buffer.alloc(9);
  b[0] = 0xfe;
  b.writeBigUInt64LE(BigInt(n), 1);
  return b;
}

export function lenencStr(value: string | Uint8Array): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value, "utf8") : Buffer.from(value);
  return Buffer.concat([lenencInt(bytes.length), bytes]);
}

export function nulStr(value: string): Buffer {
  return Buffer.concat([Buffer.from(value, "utf8"), Buffer.from([0])]);
}

export function encodeOk(opts: { affectedRows?: number; lastInsertId?: number; status: number; warnings?: number; info?: string; eof?: boolean }): Buffer {
  const parts = [
    // 0xfe instead of 0x00 ends a result set for a client with CLIENT_DEPRECATE_EOF.
    Buffer.from([opts.eof ? 0xfe : 0x00]),
    lenencInt(opts.affectedRows ?? 0),
    lenencInt(opts.lastInsertId ?? 0),
    u16(opts.status),
    u16(opts.warnings ?? 0),
  ];
  if (opts.info) parts.push(lenencStr(opts.info));
  return Buffer.concat(parts);
}

export function encodeErr(code: number, sqlState: string, message: string, protocol41 = true): Buffer {
  const head = Buffer.concat([Buffer.from([0xff]), u16(code)]);
  return Buffer.concat([head, protocol41 ? Buffer.from(`#${sqlState}`, "latin1") : Buffer.alloc(0), Buffer.from(message, "utf8")]);
}

export function encodeEof(status: number, warnings = 0): Buffer {
  return Buffer.concat([Buffer.from([0xfe]), u16(warnings), u16(status)]);
}

export interface Column {
  name: string;
  type: number;
  schema?: string;
  table?: string;
  /** Display width in characters; clients size their tables by it. */
  width?: number;
}

const NOT_NULL = 0x1;
const UNSIGNED = 0x20;
const BINARY_FLAG = 0x80;
const NUM = 0x8000;

/** Protocol::ColumnDefinition41. */
export function encodeColumn(c: Column): Buffer {
  const numeric = c.type === TYPE.LONGLONG;
  const charset = numeric ? BINARY : UTF8MB4;
  const width = c.width ?? (numeric ? 21 : 64);
  const flags = numeric ? NOT_NULL | UNSIGNED | BINARY_FLAG | NUM : 0;
  return Buffer.concat([
    lenencStr("def"),
    lenencStr(c.schema ?? ""),
    lenencStr(c.table ?? ""),
    lenencStr(c.table ?? ""),
    lenencStr(c.name),
    lenencStr(c.name),
    Buffer.from([0x0c]),
    u16(charset),
    u32(numeric ? width : width * 4),
    Buffer.from([c.type]),
    u16(flags),
    Buffer.from([0]),
    Buffer.alloc(2),
  ]);
}

export function decodeColumnName(payload: Buffer): string {
  const r = new Reader(payload);
  for (let i = 0; i < 4; i++) r.lenencBytes();
  return text(r.lenencBytes());
}

/** A text-protocol row: each value length-encoded, NULL as 0xfb. */
export function encodeRow(values: (string | null)[]): Buffer {
  return Buffer.concat(values.map((v) => (v === null ? Buffer.from([0xfb]) : lenencStr(v))));
}

export function decodeRow(payload: Buffer, columns: number): (string | null)[] {
  const r = new Reader(payload);
  const out: (string | null)[] = [];
  for (let i = 0; i < columns; i++) {
    if (r.buf[r.pos] === 0xfb) {
      r.u8();
      out.push(null);
    } else out.push(text(r.lenencBytes()));
  }
  return out;
}

/**
 * The payloads of a text result set, in order: column count, definitions, (EOF), rows, and its
 * end: an EOF packet, or an OK packet headed 0xfe for a client that deprecated EOF.
 */
export function encodeResultSet(columns: Column[], rows: (string | null)[][], status: number, deprecateEof: boolean): Buffer[] {
  const out = [lenencInt(columns.length), ...columns.map(encodeColumn)];
  if (!deprecateEof) out.push(encodeEof(status));
  for (const row of rows) out.push(encodeRow(row));
  out.push(deprecateEof ? encodeOk({ status, eof: true }) : encodeEof(status));
  return out;
}

export type Command =
  | { kind: "quit" }
  | { kind: "ping" }
  | { kind: "statistics" }
  | { kind: "reset" }
  | { kind: "query"; sql: Buffer }
  | { kind: "prepare"; sql: Buffer }
  | { kind: "init_db"; schema: Buffer }
  | { kind: "field_list"; table: Buffer; wildcard: Buffer }
  | { kind: "unknown"; code: number };

export function decodeCommand(payload: Buffer): Command {
  if (payload.length === 0) throw new DecodeError("empty command");
  const body = payload.subarray(1);
  switch (payload[0]) {
    case COM.QUIT:
      return { kind: "quit" };
    case COM.PING:
      return { kind: "ping" };
    case COM.STATISTICS:
      return { kind: "statistics" };
    case COM.RESET_CONNECTION:
      return { kind: "reset" };
    case COM.QUERY:
      return { kind: "query", sql: body };
    case COM.STMT_PREPARE:
      return { kind: "prepare", sql: body };
    case COM.INIT_DB:
      return { kind: "init_db", schema: body };
    case COM.FIELD_LIST: {
      const r = new Reader(body);
      const table = r.nulBytes();
      return { kind: "field_list", table, wildcard: r.rest() };
    }
    default:
      return { kind: "unknown", code: payload[0]! };
  }
}
