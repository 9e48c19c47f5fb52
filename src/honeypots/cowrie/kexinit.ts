/**
 * The SSH client's first KEXINIT, read from the start of its byte stream, and its HASSH
 * (salesforce/hassh, as Cowrie 2.9 logs it in `cowrie.client.kex`). ssh2 parses the client's
 * KEXINIT but only reports the algorithms it negotiated, not the lists the client offered, so
 * the pot reads them itself from a copy of what the client sent first: its identification line,
 * then its first binary packet, which is never encrypted (RFC 4253 sections 4.2, 6 and 7.1).
 */
import { createHash } from "node:crypto";

/**
 * Bytes read at most, identification line included: RFC 4253's largest packet (35000) is all a
 * client may need for its KEXINIT. Past it, or on anything malformed, the reader gives up.
 */
export const MAX_PREFIX = 35000;
const SSH_MSG_KEXINIT = 20;
const COOKIE = 16;
const NAME_LISTS = 10;

/** The client's offer, in the shape of Cowrie's `cowrie.client.kex` (client-to-server lists only). */
export interface KexInit {
  hassh: string;
  hasshAlgorithms: string;
  kexAlgs: string[];
  keyAlgs: string[];
  encCS: string[];
  macCS: string[];
  compCS: string[];
  langCS: string[];
}

const utf8 = new TextDecoder("utf-8");

/**
 * A KEXINIT's payload (message number first) as the client's offer; null when it is not one.
 * Lists are split on commas as Cowrie splits them, so an empty list is `[""]`.
 */
export function parseKexInitPayload(payload: Uint8Array): KexInit | null {
  if (payload.length < 1 + COOKIE || payload[0] !== SSH_MSG_KEXINIT) return null;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const lists: string[] = [];
  let at = 1 + COOKIE;
  for (let i = 0; i < NAME_LISTS; i++) {
    if (at + 4 > payload.length) return null;
    const len = view.getUint32(at);
    at += 4;
    if (len > payload.length - at) return null;
    // Name-lists are US-ASCII (RFC 4251 section 5); other bytes stay data, replaced where not UTF-8.
    lists.push(utf8.decode(payload.subarray(at, at + len)));
    at += len;
  }
  const [kex, hostKey, encCS, , macCS, , compCS, , langCS] = lists as [string, string, string, string, string, string, string, string, string, string];
  // hassh's definition: the client's kex, cipher, MAC and compression lists, as sent, joined by ";".
  const hasshAlgorithms = `${kex};${encCS};${macCS};${compCS}`;
  return {
    hassh: createHash("md5").update(hasshAlgorithms).digest("hex"),
    hasshAlgorithms,
    kexAlgs: kex.split(","),
    keyAlgs: hostKey.split(","),
    encCS: encCS.split(","),
    macCS: macCS.split(","),
    compCS: compCS.split(","),
    langCS: langCS.split(","),
  };
}

export type PrefixResult = { status: "more" } | { status: "failed" } | { status: "done"; kex: KexInit };

const MORE = { status: "more" } as const;
const FAILED = { status: "failed" } as const;

/** The KEXINIT in the first bytes a client sent: "more" while they hold no complete packet yet. */
export function readClientKexInit(prefix: Uint8Array): PrefixResult {
  const ident = new IdentScan();
  const at = ident.scan(prefix);
  if (at < 0) return prefix.length >= MAX_PREFIX ? FAILED : MORE;
  return readPacket(prefix, at);
}

/**
 * Finds the end of the identification line, scanning each byte once however the bytes come.
 * Lines before it are skipped (RFC 4253 lets a server send them; a client that does is still
 * read), bounded by MAX_PREFIX like everything else.
 */
class IdentScan {
  private lineStart = 0;
  private scanned = 0;

  /** Where the first packet starts; -1 while the line is incomplete. */
  scan(buf: Uint8Array): number {
    for (;;) {
      const nl = buf.indexOf(0x0a, this.scanned);
      if (nl < 0) {
        this.scanned = buf.length;
        return -1;
      }
      const at = this.lineStart;
      const isIdent = nl - at >= 4 && buf[at] === 0x53 && buf[at + 1] === 0x53 && buf[at + 2] === 0x48 && buf[at + 3] === 0x2d; // "SSH-"
      this.lineStart = this.scanned = nl + 1;
      if (isIdent) return nl + 1;
    }
  }
}

/** The binary packet at `at`: uint32 packet_length, byte padding_length, payload, padding (no MAC yet). */
function readPacket(buf: Uint8Array, at: number): PrefixResult {
  if (buf.length - at < 5) return buf.length >= MAX_PREFIX ? FAILED : MORE;
  const packetLength = new DataView(buf.buffer, buf.byteOffset, buf.byteLength).getUint32(at);
  const padding = buf[at + 4]!;
  // packet_length counts the padding-length byte, the payload and the padding.
  if (packetLength < 1 + padding + 1 || at + 4 + packetLength > MAX_PREFIX) return FAILED;
  if (buf.length < at + 4 + packetLength) return MORE;
  const kex = parseKexInitPayload(buf.subarray(at + 5, at + 4 + packetLength - padding));
  return kex ? { status: "done", kex } : FAILED;
}

/** Gathers a connection's first bytes, chunk by chunk, until its KEXINIT is read or given up on. */
export class KexInitReader {
  /** Grown by doubling, so a client sending a byte at a time costs no quadratic copying. */
  private buf = Buffer.alloc(512);
  private len = 0;
  private readonly ident = new IdentScan();
  private packetAt = -1;
  private finished = false;

  /** The client's offer once complete; null while more is needed and after it is given up on. */
  feed(chunk: Uint8Array): KexInit | null {
    if (this.finished) return null;
    const take = Math.min(chunk.length, MAX_PREFIX - this.len);
    if (this.len + take > this.buf.length) {
      const grown = Buffer.alloc(Math.min(MAX_PREFIX, Math.max(this.buf.length * 2, this.len + take)));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    this.buf.set(chunk.subarray(0, take), this.len);
    this.len += take;
    const data = this.buf.subarray(0, this.len);
    if (this.packetAt < 0) this.packetAt = this.ident.scan(data);
    const r: PrefixResult = this.packetAt < 0 ? (this.len >= MAX_PREFIX ? FAILED : MORE) : readPacket(data, this.packetAt);
    if (r.status === "more") return null;
    this.finished = true;
    this.buf = Buffer.alloc(0);
    return r.status === "done" ? r.kex : null;
  }

  /** True once the offer was read or given up on: nothing more to feed. */
  get done(): boolean {
    return this.finished;
  }
}
