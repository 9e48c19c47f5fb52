/**
 * The Android Debug Bridge wire protocol (adb's protocol.txt): every message is a 24-byte
 * little-endian header (command, arg0, arg1, data_length, data_check, magic = command ^
 * 0xffffffff) followed by data_length bytes. Pure: no sockets here.
 */

export const HEADER_SIZE = 24;
/** Protocol versions: from 0x01000001 on, senders put 0 in data_check and receivers ignore it. */
export const VERSION_MIN = 0x01000000;
export const VERSION_SKIP_CHECKSUM = 0x01000001;
/** CNXN and AUTH are capped at the first protocol's 4 KiB until both sides have said their maxdata. */
export const MAX_PAYLOAD_V1 = 4096;
/** What we advertise (adbd of Android 7-8; newer say 1 MiB): also the largest message we take. */
export const MAX_PAYLOAD = 256 * 1024;

export const COMMANDS = {
  SYNC: 0x434e5953,
  CNXN: 0x4e584e43,
  AUTH: 0x48545541,
  OPEN: 0x4e45504f,
  OKAY: 0x59414b4f,
  CLSE: 0x45534c43,
  WRTE: 0x45545257,
  STLS: 0x534c5453,
} as const;

export type Command = keyof typeof COMMANDS;

const BY_CODE = new Map<number, Command>(Object.entries(COMMANDS).map(([name, code]) => [code, name as Command]));
const NAMES = Object.keys(COMMANDS);

/** AUTH's arg0. */
export const AUTH_TOKEN = 1;
export const AUTH_SIGNATURE = 2;
export const AUTH_RSAPUBLICKEY = 3;

export interface Message {
  command: Command;
  arg0: number;
  arg1: number;
  data: Buffer;
}

/** A peer broke the framing; its connection is closed (adbd drops the transport too). */
export class ProtocolError extends Error {}

/** The byte sum protocol 0x01000000 puts in data_check. */
export function checksum(data: Uint8Array): number {
  let sum = 0;
  for (const b of data) sum += b;
  return sum >>> 0;
}

/** A message on the wire; `withChecksum` for peers that still speak version 0x01000000. */
export function encode(command: Command, arg0: number, arg1: number, data: Uint8Array = new Uint8Array(0), withChecksum = false): Buffer {
  const out = Buffer.alloc(HEADER_SIZE + data.length);
  const code = COMMANDS[command];
  out.writeUInt32LE(code, 0);
  out.writeUInt32LE(arg0 >>> 0, 4);
  out.writeUInt32LE(arg1 >>> 0, 8);
  out.writeUInt32LE(data.length, 12);
  out.writeUInt32LE(withChecksum ? checksum(data) : 0, 16);
  out.writeUInt32LE((code ^ 0xffffffff) >>> 0, 20);
  out.set(data, HEADER_SIZE);
  return out;
}

/**
 * Splits a byte stream into messages. It holds at most one incomplete message (a header and
 * `maxData` bytes): a longer data_length, a bad magic or an unknown command throws ProtocolError.
 * The command is checked as soon as its first bytes arrive, so a stray HTTP request or scanner
 * probe is refused at once rather than waited on until 24 bytes have come.
 * data_check is not verified: adb from version 0x01000001 on sends 0 there and adbd ignores it,
 * while older peers send the byte sum; both are taken.
 */
export class MessageDecoder {
  private header: Buffer | null = null;
  private parts: Buffer[] = [];
  private held = 0;

  constructor(readonly maxData = MAX_PAYLOAD) {}

  push(chunk: Uint8Array): Message[] {
    const out: Message[] = [];
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (rest.length > 0) {
      const want = (this.header ? this.header.readUInt32LE(12) : HEADER_SIZE) - this.held;
      const take = rest.subarray(0, want);
      rest = rest.subarray(take.length);
      this.parts.push(take);
      this.held += take.length;
      if (!this.header) {
        this.checkPrefix();
        if (this.held < HEADER_SIZE) continue;
        this.header = this.takeHeader();
        if (this.header.readUInt32LE(12) > 0) continue;
      } else if (this.held < this.header.readUInt32LE(12)) {
        continue;
      }
      out.push(this.message());
    }
    return out;
  }

  private checkPrefix(): void {
    const seen = Buffer.concat(this.parts).toString("latin1", 0, Math.min(this.held, 4));
    if (!NAMES.some((name) => name.startsWith(seen))) throw new ProtocolError(`unknown command ${JSON.stringify(seen)}`);
  }

  private takeHeader(): Buffer {
    const header = Buffer.concat(this.parts);
    this.parts = [];
    this.held = 0;
    const code = header.readUInt32LE(0);
    if (!BY_CODE.has(code)) throw new ProtocolError(`unknown command ${code.toString(16)}`);
    if (header.readUInt32LE(20) !== (code ^ 0xffffffff) >>> 0) throw new ProtocolError("bad magic");
    const length = header.readUInt32LE(12);
    if (length > this.maxData) throw new ProtocolError(`data_length ${length} over ${this.maxData}`);
    return header;
  }

  private message(): Message {
    const header = this.header as Buffer;
    const data = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts);
    this.header = null;
    this.parts = [];
    this.held = 0;
    return { command: BY_CODE.get(header.readUInt32LE(0)) as Command, arg0: header.readUInt32LE(4), arg1: header.readUInt32LE(8), data };
  }
}

/** A CNXN's system identity, `<systemtype>:<serialno>:<banner>`, banner being `key=value;...`. */
export interface Identity {
  systemType: string;
  serial: string;
  props: Record<string, string>;
}

/** Text of a payload up to its first NUL (adb sends C strings, sometimes with the NUL). */
export function cString(data: Uint8Array): string {
  const nul = data.indexOf(0);
  return Buffer.from(data.subarray(0, nul === -1 ? data.length : nul)).toString("latin1");
}

export function parseIdentity(text: string): Identity {
  const first = text.indexOf(":");
  const second = first === -1 ? -1 : text.indexOf(":", first + 1);
  if (second === -1) return { systemType: first === -1 ? text : text.slice(0, first), serial: "", props: {} };
  const props: Record<string, string> = Object.create(null);
  for (const pair of text.slice(second + 1).split(";")) {
    const eq = pair.indexOf("=");
    if (eq > 0) props[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return { systemType: text.slice(0, first), serial: text.slice(first + 1, second), props };
}

/** adbd's banner: the three product properties, then the features, as get_connection_string() builds it. */
export function deviceBanner(product: { name: string; model: string; device: string }, features: readonly string[]): string {
  return `device::ro.product.name=${product.name};ro.product.model=${product.model};ro.product.device=${product.device};features=${features.join(",")}`;
}

/**
 * An adb public key (AUTH RSAPUBLICKEY): base64 of the key struct, a space, `user@host`. The
 * fingerprint is what Android's "Allow USB debugging?" dialog shows: MD5 of the decoded key,
 * upper-case hex pairs joined by colons.
 */
export function publicKeyInfo(payload: Uint8Array): { key: string; comment: string; fingerprint: string | null } {
  const text = cString(payload).trim();
  const space = text.indexOf(" ");
  const key = space === -1 ? text : text.slice(0, space);
  const comment = space === -1 ? "" : text.slice(space + 1);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return { key, comment, fingerprint: null };
  const digest = new Bun.CryptoHasher("md5").update(Buffer.from(key, "base64")).digest("hex").toUpperCase();
  return { key, comment, fingerprint: digest.match(/../g)!.join(":") };
}
