/**
 * Signatures of binary protocols whose clients speak first, each from the first message's fixed
 * header: TLS and SSLv2 hellos, Telnet's option negotiation, SMB and NetBIOS, RDP and ISO-TSAP
 * (S7), AJP, MQTT, MS SQL's TDS, PostgreSQL, Java RMI, ADB, Bitcoin, AMQP and X11. Those known
 * by little more than a length field and a few values are in length-protocols.ts.
 * A length field is only believed as far as the bytes go: a capture cut short still guesses.
 */
import { readClientHello } from "../web/clienthello.ts";
import { ja3Hash, ja3Text, ja4, offeredVersion, versionName } from "../web/fingerprint.ts";
import { cstring, type GuessFields, has, type Signature, shown, u8, u16be, u16le, u32be, u32le } from "./bytes.ts";

/** Real clients' JA3 and JA4_r texts are a few hundred characters. */
const MAX_FINGERPRINT_TEXT = 2048;

const tls: Signature = {
  name: "tls",
  match(b) {
    // A handshake record of SSL 3.0 to TLS 1.3 whose first message is a ClientHello (type 1).
    if (!(b[0] === 0x16 && b[1] === 0x03 && u8(b, 2) >= 0 && u8(b, 2) <= 0x04 && u8(b, 5) === 1)) return null;
    const read = readClientHello(b);
    if (read.kind !== "hello") return { tls_version: null, sni: null, alpn: [], ja3: null, ja3_hash: null, ja4: null, ja4_r: null };
    const hello = read.hello;
    const text = ja3Text(hello);
    const { ja4: hash, ja4_r } = ja4(hello);
    // A forged hello may list thousands of ciphers: the texts are clipped, the hashes are of the whole.
    return {
      tls_version: versionName(offeredVersion(hello)),
      sni: hello.sni === null ? null : shown(Buffer.from(hello.sni, "latin1")),
      alpn: hello.alpn.slice(0, 16).map((p) => shown(p, 0, p.length, 64)),
      ja3: text.slice(0, MAX_FINGERPRINT_TEXT),
      ja3_hash: ja3Hash(text),
      ja4: hash,
      ja4_r: ja4_r.slice(0, MAX_FINGERPRINT_TEXT),
    };
  },
};

/** The SSLv2-format hello old clients and scanners (nmap's SSLv23SessionReq) still send. */
const sslv2: Signature = {
  name: "tls",
  match(b) {
    const version = u16be(b, 3);
    if (!(b[0]! & 0x80) || u8(b, 2) !== 1 || ![0x0002, 0x0300, 0x0301, 0x0302, 0x0303].includes(version)) return null;
    return { tls_version: versionName(version), sslv2_hello: true };
  },
};

/** IAC followed by WILL, WONT, DO, DONT or SB: a client negotiating options before anything else. */
const telnet: Signature = { name: "telnet", match: (b) => (b[0] === 0xff && u8(b, 1) >= 0xfa ? {} : null) };

const SMB2_DIALECTS = new Map([
  [0x0202, "2.0.2"],
  [0x0210, "2.1"],
  [0x02ff, "2.???"],
  [0x0300, "3.0"],
  [0x0302, "3.0.2"],
  [0x0311, "3.1.1"],
]);

/** SMB1 or SMB2 behind a NetBIOS session message (port 445's framing); dialects when it is a negotiate. */
const smb: Signature = {
  name: "smb",
  match(b) {
    if (b[0] !== 0 || !has(b, "SMB", 5) || ![0xff, 0xfe, 0xfd].includes(b[4]!)) return null;
    const dialects: string[] = [];
    if (b[4] === 0xff && b[8] === 0x72) {
      // SMB_COM_NEGOTIATE: after the 32-byte header, a word count (0), a byte count, then 0x02 "dialect\0" each.
      let at = 39;
      const end = Math.min(b.length, at + Math.max(0, u16le(b, 37)));
      while (at < end && b[at] === 0x02 && dialects.length < 16) {
        const name = cstring(b, at + 1, 64);
        if (!name) break;
        dialects.push(name.value);
        at = name.end;
      }
    } else if (b[4] === 0xfe && u16le(b, 16) === 0 && u16le(b, 68) === 36) {
      // SMB2 NEGOTIATE: a 36-byte structure after the 64-byte header, then the dialects (16 bits each).
      const count = Math.min(u16le(b, 70), 16);
      for (let i = 0; i < count && u16le(b, 104 + 2 * i) >= 0; i++) {
        const d = u16le(b, 104 + 2 * i);
        dialects.push(SMB2_DIALECTS.get(d) ?? `0x${d.toString(16).padStart(4, "0")}`);
      }
    }
    return { smb_version: b[4] === 0xff ? 1 : b[4] === 0xfe ? 2 : 3, smb_dialects: dialects };
  },
};

/** NetBIOS session request (port 139): called and calling names, 32 encoded bytes each. */
const netbios: Signature = { name: "netbios-ssn", match: (b) => (b[0] === 0x81 && b[1] === 0 && u8(b, 4) === 0x20 ? {} : null) };

/** Offset of the variable part of an X.224 connection request inside TPKT (RFC 1006), or -1. */
function cotpConnectRequest(b: Buffer): number {
  return b[0] === 3 && b[1] === 0 && u16be(b, 2) >= 11 && u8(b, 4) >= 6 && (u8(b, 5) & 0xf0) === 0xe0 ? 11 : -1;
}

/** S7comm and other ISO-on-TCP clients name TSAPs in their connection request (parameters 0xc0-0xc2). */
const isoTsap: Signature = { name: "iso-tsap", match: (b) => (cotpConnectRequest(b) === 11 && [0xc0, 0xc1, 0xc2].includes(u8(b, 11)) ? {} : null) };

const RDP_PROTOCOLS: Array<[number, string]> = [
  [0x01, "ssl"],
  [0x02, "hybrid"],
  [0x04, "rdstls"],
  [0x08, "hybrid_ex"],
  [0x10, "rdsaad"],
];

/** MS-RDPBCGR 2.2.1.1: an optional cookie line ("Cookie: mstshash=USER"), then RDP_NEG_REQ. */
const rdp: Signature = {
  name: "rdp",
  match(b) {
    let at = cotpConnectRequest(b);
    if (at < 0) return null;
    let cookie: string | null = null;
    if (has(b, "Cookie: ", at)) {
      const end = b.indexOf("\r\n", at);
      cookie = shown(b, at + 8, end < 0 ? b.length : end);
      at = end < 0 ? b.length : end + 2;
    }
    let protocols = ["rdp"];
    if (u8(b, at) === 0x01 && u16le(b, at + 2) === 8 && u32le(b, at + 4) > 0) {
      const requested = u32le(b, at + 4);
      protocols = RDP_PROTOCOLS.filter(([bit]) => requested & bit).map(([, name]) => name);
    }
    return { rdp_cookie: cookie, rdp_protocols: protocols };
  },
};

/** AJP13 (Tomcat's port 8009, Ghostcat's target): magic 0x1234 from the web server. */
const AJP_TYPES = new Map([
  [2, "forward_request"],
  [7, "shutdown"],
  [8, "ping"],
  [10, "cping"],
]);
const ajp: Signature = { name: "ajp", match: (b) => (b[0] === 0x12 && b[1] === 0x34 && u8(b, 4) >= 0 ? { ajp_type: AJP_TYPES.get(b[4]!) ?? String(b[4]) } : null) };

/** MS SQL's TDS: a PRELOGIN (type 0x12, first option VERSION) or a LOGIN7 (type 0x10). */
const mssql: Signature = {
  name: "mssql",
  match(b) {
    const length = u16be(b, 2);
    if (length < 8 || u8(b, 7) !== 0 || u8(b, 1) > 0x01) return null;
    if (b[0] === 0x12 && u8(b, 8) === 0x00) return { mssql_packet: "prelogin" };
    if (b[0] === 0x10 && b[1] === 0x01 && u32le(b, 8) === length - 8) return { mssql_packet: "login7" };
    return null;
  },
};

/** A length-prefixed MQTT string (UTF-8 in the spec; data here) and where it ends, or null. */
function mqttString(b: Buffer, at: number): { value: string; end: number } | null {
  const n = u16be(b, at);
  return n < 0 || at + 2 + n > b.length ? null : { value: shown(b, at + 2, at + 2 + n), end: at + 2 + n };
}

/** MQTT's variable byte integer: value and where it ends, or null. */
function varint(b: Buffer, at: number): { value: number; end: number } | null {
  let value = 0;
  for (let i = 0; i < 4; i++) {
    const byte = u8(b, at + i);
    if (byte < 0) return null;
    value += (byte & 0x7f) * 128 ** i;
    if (!(byte & 0x80)) return { value, end: at + i + 1 };
  }
  return null;
}

const MQTT_LEVELS = new Map([
  [3, "3.1"],
  [4, "3.1.1"],
  [5, "5.0"],
]);

/** CONNECT (0x10) with protocol name "MQTT" (3.1.1, 5.0) or "MQIsdp" (3.1). */
const mqtt: Signature = {
  name: "mqtt",
  match(b) {
    const remaining = b[0] === 0x10 ? varint(b, 1) : null;
    if (!remaining) return null;
    let at = remaining.end;
    const name = u16be(b, at) === 4 && has(b, "MQTT", at + 2) ? 6 : u16be(b, at) === 6 && has(b, "MQIsdp", at + 2) ? 8 : 0;
    if (name === 0) return null;
    at += name;
    const level = u8(b, at);
    const flags = u8(b, at + 1);
    const fields: GuessFields = { mqtt_version: MQTT_LEVELS.get(level) ?? String(level), mqtt_client_id: null, mqtt_username: null, mqtt_password: null };
    at += 4;
    const skipProperties = () => {
      if (level !== 5) return true;
      const length = varint(b, at);
      if (length) at = length.end + length.value;
      return length !== null;
    };
    if (!skipProperties()) return fields;
    const client = mqttString(b, at);
    if (!client) return fields;
    fields.mqtt_client_id = client.value;
    at = client.end;
    if (flags & 0x04) {
      // A will message: its properties (5.0), topic and payload come before the user name.
      if (!skipProperties()) return fields;
      const topic = mqttString(b, at);
      const payload = topic && mqttString(b, topic.end);
      if (!payload) return fields;
      at = payload.end;
    }
    const user = flags & 0x80 ? mqttString(b, at) : null;
    if (user) {
      fields.mqtt_username = user.value;
      at = user.end;
    }
    const password = flags & 0x40 ? mqttString(b, at) : null;
    if (password) fields.mqtt_password = password.value;
    return fields;
  },
};

/** PostgreSQL's first message: SSLRequest, GSSENCRequest, CancelRequest or a v3 (v2) StartupMessage. */
const postgresql: Signature = {
  name: "postgresql",
  match(b): GuessFields | null {
    const length = u32be(b, 0);
    const code = u32be(b, 4);
    if (length === 8 && code === 80877103) return { pg_request: "ssl" };
    if (length === 8 && code === 80877104) return { pg_request: "gssenc" };
    if (length === 16 && code === 80877102) return { pg_request: "cancel" };
    if ((code !== 0x00030000 && code !== 0x00020000) || length < 9 || length > 10000) return null;
    const params = new Map<string, string>();
    let at = 8;
    for (let i = 0; i < 32 && at < Math.min(b.length, length) && b[at] !== 0; i++) {
      const key = cstring(b, at, 64);
      const value = key && cstring(b, key.end);
      if (!value) break;
      params.set(key.value, value.value);
      at = value.end;
    }
    return { pg_request: "startup", pg_user: params.get("user") ?? null, pg_database: params.get("database") ?? null, pg_application: params.get("application_name") ?? null };
  },
};

const javaRmi: Signature = { name: "java-rmi", match: (b) => (has(b, "JRMI") && [1, 2].includes(u16be(b, 4)) ? {} : null) };

/** ADB's CNXN message; its payload is the host's banner ("host::features=..."). */
const adb: Signature = {
  name: "adb",
  match: (b) => (has(b, "CNXN") && b.length >= 24 ? { adb_banner: shown(b, 24, 24 + Math.max(0, u32le(b, 12))) } : null),
};

/** Bitcoin's P2P messages start with the network's magic, then a NUL-padded command name. */
const BITCOIN_MAGIC = [
  [0xf9, 0xbe, 0xb4, 0xd9],
  [0x0b, 0x11, 0x09, 0x07],
  [0xfa, 0xbf, 0xb5, 0xda],
  [0x0a, 0x03, 0xcf, 0x40],
];
const bitcoin: Signature = {
  name: "bitcoin",
  match(b) {
    if (!BITCOIN_MAGIC.some((magic) => has(b, magic)) || b.length < 16) return null;
    const command = cstring(b, 4, 12);
    return { bitcoin_command: command ? command.value : shown(b, 4, 16) };
  },
};

/** "AMQP" then the protocol id and version: 0.9.1 (RabbitMQ) or 1.0.0. */
const amqp: Signature = { name: "amqp", match: (b) => (has(b, "AMQP") && b.length >= 8 ? { amqp_version: `${b[5]}.${b[6]}.${b[7]}` } : null) };

/** X11 connection setup: byte order ('l' or 'B'), then protocol major version 11 in that order. */
const x11: Signature = {
  name: "x11",
  match: (b) => ((b[0] === 0x6c && b[1] === 0 && u16le(b, 2) === 11) || (b[0] === 0x42 && b[1] === 0 && u16be(b, 2) === 11) ? {} : null),
};

/** In the order they are tried (MQTT before TDS: both may start with 0x10). */
export const BINARY_SIGNATURES: readonly Signature[] = [tls, sslv2, telnet, smb, netbios, isoTsap, rdp, ajp, mqtt, mssql, postgresql, javaRmi, adb, bitcoin, amqp, x11];
