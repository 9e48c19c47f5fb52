/**
 * The TLS ClientHello, read from the bytes a client sends first, before any TLS library sees
 * them: JA3 and JA4 are computed from fields (the order of extensions, GREASE values) that a
 * TLS server does not expose once the handshake is done.
 *
 * A handshake message may span several records (RFC 8446 5.1), and TCP may cut anywhere, so
 * `readClientHello` answers "need more" until the whole message is there; everything it reads is
 * length-checked, and a lie in a length field is a parse error, never an out-of-range read.
 */

export interface ClientHello {
  /** The record layer's version (0x0301 from most clients, whatever they speak). */
  recordVersion: number;
  /** legacy_version of the hello: 0x0303 for TLS 1.2 and 1.3. */
  version: number;
  ciphers: number[];
  /** Extension types in the order sent. */
  extensions: number[];
  /** supported_groups (ex "elliptic curves"), extension 10. */
  groups: number[];
  /** ec_point_formats, extension 11. */
  pointFormats: number[];
  /** signature_algorithms, extension 13, in the order sent. */
  signatureAlgorithms: number[];
  /** supported_versions, extension 43. */
  supportedVersions: number[];
  /** ALPN protocol names (extension 16), as raw bytes: they need not be text. */
  alpn: Uint8Array[];
  /** The host name of server_name (extension 0), or null without one. */
  sni: string | null;
}

export type HelloResult = { kind: "more" } | { kind: "hello"; hello: ClientHello } | { kind: "error"; reason: string };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 1;
/** A ClientHello is a few hundred bytes, a couple of KB with post-quantum key shares. */
export const MAX_HELLO_BYTES = 64 * 1024;

/** GREASE (RFC 8701): 0x0a0a, 0x1a1a ... 0xfafa, sent to keep servers tolerant; fingerprints leave them out. */
export function isGrease(value: number): boolean {
  return (value & 0x0f0f) === 0x0a0a && value >> 8 === (value & 0xff);
}

class Reader {
  private at = 0;
  constructor(private readonly bytes: Uint8Array) {}

  get left(): number {
    return this.bytes.length - this.at;
  }

  u8(): number {
    if (this.left < 1) throw new RangeError("truncated");
    return this.bytes[this.at++]!;
  }

  u16(): number {
    return (this.u8() << 8) | this.u8();
  }

  take(n: number): Uint8Array {
    if (n > this.left) throw new RangeError("truncated");
    const out = this.bytes.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }

  /** Everything not read yet. */
  rest(): Uint8Array {
    return this.take(this.left);
  }

  /** A length-prefixed block (1 or 2 bytes of length) as a reader of its own. */
  block(lengthBytes: 1 | 2): Reader {
    return new Reader(this.take(lengthBytes === 1 ? this.u8() : this.u16()));
  }

  u16s(): number[] {
    const out: number[] = [];
    while (this.left >= 2) out.push(this.u16());
    if (this.left !== 0) throw new RangeError("odd length in a list of 16-bit values");
    return out;
  }
}

/** The handshake message's bytes, gathered from consecutive handshake records. */
function handshakeBytes(data: Uint8Array): { message: Uint8Array; recordVersion: number } | "more" | string {
  const parts: Uint8Array[] = [];
  let have = 0;
  let need = -1;
  let at = 0;
  let recordVersion = 0;
  for (;;) {
    if (data.length - at < 5) return "more";
    if (data[at] !== HANDSHAKE) return at === 0 ? "not a TLS handshake record" : "a record other than handshake inside the ClientHello";
    if (at === 0) recordVersion = (data[1]! << 8) | data[2]!;
    const length = (data[at + 3]! << 8) | data[at + 4]!;
    if (length === 0 || length > 16384 + 2048) return "bad record length";
    if (data.length - at - 5 < length) return "more";
    parts.push(data.subarray(at + 5, at + 5 + length));
    have += length;
    at += 5 + length;
    if (need < 0 && have >= 4) {
      const head = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      if (head[0] !== CLIENT_HELLO) return "first handshake message is not a ClientHello";
      need = 4 + ((head[1]! << 16) | (head[2]! << 8) | head[3]!);
      if (need > MAX_HELLO_BYTES) return "ClientHello too long";
    }
    if (need >= 0 && have >= need) return { message: Buffer.concat(parts).subarray(4, need), recordVersion };
  }
}

function parseExtensions(r: Reader, hello: ClientHello): void {
  while (r.left > 0) {
    const type = r.u16();
    const body = r.block(2);
    hello.extensions.push(type);
    switch (type) {
      case 0: {
        const list = body.block(2);
        while (list.left > 0) {
          const nameType = list.u8();
          const name = list.block(2).rest();
          // Only host_name (0) is defined; the name is data, kept as Latin-1 so every byte survives.
          if (nameType === 0 && hello.sni === null) hello.sni = Buffer.from(name).toString("latin1");
        }
        break;
      }
      case 10:
        hello.groups = body.block(2).u16s();
        break;
      case 11: {
        const formats = body.block(1);
        while (formats.left > 0) hello.pointFormats.push(formats.u8());
        break;
      }
      case 13:
        hello.signatureAlgorithms = body.block(2).u16s();
        break;
      case 16: {
        const list = body.block(2);
        while (list.left > 0) hello.alpn.push(list.block(1).rest().slice());
        break;
      }
      case 43:
        hello.supportedVersions = body.block(1).u16s();
        break;
    }
  }
}

/** Reads a ClientHello from the start of a connection's bytes. */
export function readClientHello(data: Uint8Array): HelloResult {
  const gathered = handshakeBytes(data);
  if (gathered === "more") return { kind: "more" };
  if (typeof gathered === "string") return { kind: "error", reason: gathered };
  const hello: ClientHello = {
    recordVersion: gathered.recordVersion,
    version: 0,
    ciphers: [],
    extensions: [],
    groups: [],
    pointFormats: [],
    signatureAlgorithms: [],
    supportedVersions: [],
    alpn: [],
    sni: null,
  };
  try {
    const r = new Reader(gathered.message);
    hello.version = r.u16();
    r.take(32);
    r.block(1);
    hello.ciphers = r.block(2).u16s();
    r.block(1);
    // A hello without extensions ends here (SSL 3.0 style, still sent by some scanners).
    if (r.left > 0) parseExtensions(r.block(2), hello);
  } catch (err) {
    return { kind: "error", reason: `malformed ClientHello: ${(err as Error).message}` };
  }
  return { kind: "hello", hello };
}
