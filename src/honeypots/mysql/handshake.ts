/**
 * The connection phase of MySQL's protocol: the server's v10 greeting, the client's
 * HandshakeResponse41 (user, auth response, schema, plugin, connection attributes), and the
 * packets of an authentication exchange. Decoders throw DecodeError on short or malformed input.
 */
import { CLIENT, DecodeError, lenencStr, nulStr, Reader, text, u16, u32, UTF8MB4 } from "./packets.ts";

export interface Handshake {
  version: string;
  connectionId: number;
  /** 20 bytes, none of them NUL (clients read the second part up to a NUL). */
  scramble: Buffer;
  capabilities: number;
  status: number;
  plugin: string;
}

/** Protocol::HandshakeV10, the packet a server greets every connection with. */
export function encodeHandshake(h: Handshake): Buffer {
  return Buffer.concat([
    Buffer.from([10]),
    nulStr(h.version),
    u32(h.connectionId),
    h.scramble.subarray(0, 8),
    Buffer.from([0]),
    u16(h.capabilities),
    Buffer.from([UTF8MB4]),
    u16(h.status),
    u16(h.capabilities >>> 16),
    // Length of the whole scramble with its NUL: Connector/C hands exactly this to the plugin.
    Buffer.from([h.scramble.length + 1]),
    Buffer.alloc(10),
    h.scramble.subarray(8),
    Buffer.from([0]),
    nulStr(h.plugin),
  ]);
}

/** What a decoder can read back of a greeting (for tests and tools). */
export function decodeHandshake(payload: Buffer): Handshake {
  const r = new Reader(payload);
  if (r.u8() !== 10) throw new DecodeError("not a v10 handshake");
  const version = text(r.nulBytes());
  const connectionId = r.u32();
  const part1 = Buffer.from(r.bytes(8));
  r.u8();
  let capabilities = r.u16();
  r.u8();
  const status = r.u16();
  capabilities = (capabilities | (r.u16() << 16)) >>> 0;
  const dataLength = r.u8();
  r.bytes(10);
  const part2 = Buffer.from(r.bytes(Math.max(13, dataLength - 8)));
  const plugin = text(r.nulBytes());
  return { version, connectionId, scramble: Buffer.concat([part1, part2.subarray(0, part2.length - 1)]), capabilities, status, plugin };
}

export interface HandshakeResponse {
  capabilities: number;
  maxPacket: number;
  charset: number;
  username: string;
  authResponse: Buffer;
  database: string | null;
  /** The plugin the response was computed for; null from a client without CLIENT_PLUGIN_AUTH. */
  plugin: string | null;
  attrs: Record<string, string>;
}

/** Attributes kept per login: enough for any client library's, bounded against a flood of pairs. */
export const MAX_ATTRS = 64;
export const MAX_ATTR_CHARS = 1024;

/**
 * The client's answer to the greeting. An SSLRequest (the first 32 bytes of one, sent before a
 * TLS handshake) and a pre-4.1 response are told apart by the caller from `capabilities`.
 */
export function decodeHandshakeResponse(payload: Buffer): HandshakeResponse {
  const r = new Reader(payload);
  const capabilities = r.u32();
  if (!(capabilities & CLIENT.PROTOCOL_41)) throw new DecodeError("pre-4.1 client");
  const maxPacket = r.u32();
  const charset = r.u8();
  r.bytes(23);
  const username = text(r.nulBytes());
  let authResponse: Buffer;
  if (capabilities & CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA) authResponse = r.lenencBytes();
  else if (capabilities & CLIENT.SECURE_CONNECTION) authResponse = r.bytes(r.u8());
  else authResponse = r.nulBytes();
  let database: string | null = null;
  if (capabilities & CLIENT.CONNECT_WITH_DB && r.remaining > 0) database = text(r.nulBytes());
  let plugin: string | null = null;
  if (capabilities & CLIENT.PLUGIN_AUTH && r.remaining > 0) plugin = text(r.nulBytes());
  const attrs: Record<string, string> = Object.create(null);
  if (capabilities & CLIENT.CONNECT_ATTRS && r.remaining > 0) {
    const block = new Reader(r.lenencBytes());
    let count = 0;
    while (block.remaining > 0) {
      const key = text(block.lenencBytes()).slice(0, MAX_ATTR_CHARS);
      const value = text(block.lenencBytes()).slice(0, MAX_ATTR_CHARS);
      if (count++ < MAX_ATTRS) attrs[key] = value;
    }
  }
  return { capabilities, maxPacket, charset, username, authResponse: Buffer.from(authResponse), database, plugin, attrs };
}

/** A HandshakeResponse41 as a client builds it (for tests and tools). */
export function encodeHandshakeResponse(h: HandshakeResponse): Buffer {
  const attrs = Buffer.concat(Object.entries(h.attrs).flatMap(([k, v]) => [lenencStr(k), lenencStr(v)]));
  const parts = [u32(h.capabilities), u32(h.maxPacket), Buffer.from([h.charset]), Buffer.alloc(23), nulStr(h.username)];
  parts.push(h.capabilities & CLIENT.PLUGIN_AUTH_LENENC_CLIENT_DATA ? lenencStr(h.authResponse) : Buffer.concat([Buffer.from([h.authResponse.length]), h.authResponse]));
  if (h.capabilities & CLIENT.CONNECT_WITH_DB) parts.push(nulStr(h.database ?? ""));
  if (h.capabilities & CLIENT.PLUGIN_AUTH) parts.push(nulStr(h.plugin ?? ""));
  if (h.capabilities & CLIENT.CONNECT_ATTRS) parts.push(lenencStr(attrs));
  return Buffer.concat(parts);
}

/** AuthSwitchRequest: use another plugin, with this scramble (and its NUL, as MySQL sends it). */
export function encodeAuthSwitch(plugin: string, scramble: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xfe]), nulStr(plugin), scramble, Buffer.from([0])]);
}

/** AuthMoreData: a plugin's own message, behind the 0x01 that keeps it apart from OK/ERR/switch. */
export function encodeAuthMoreData(data: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([0x01]), data]);
}
