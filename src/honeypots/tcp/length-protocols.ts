/**
 * Signatures of binary protocols known by little more than a length field and a few values
 * that must hold: SOCKS 4 and 5, LDAP and Kerberos (BER), Oracle TNS, Sun RPC, MongoDB, DNS over
 * TCP, OpenVPN and Modbus/TCP. They are tried after every protocol with a magic number, and each
 * checks every field it can, since a random first message could satisfy a loose one.
 */
import { cstring, type GuessFields, type Signature, shown, u8, u16be, u32be, u32le } from "./bytes.ts";

function ipv4(b: Buffer, at: number): string {
  return `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
}

const SOCKS_COMMANDS = ["", "connect", "bind", "udp_associate"];

/** SOCKS4 (and 4a, whose address 0.0.0.x means a host name follows the user id). */
const socks4: Signature = {
  name: "socks",
  match(b) {
    if (b[0] !== 4 || (b[1] !== 1 && b[1] !== 2) || b.length < 9) return null;
    const user = cstring(b, 8);
    if (!user) return null;
    const port = u16be(b, 2);
    let host = ipv4(b, 4);
    if (b[4] === 0 && b[5] === 0 && b[6] === 0 && b[7] !== 0) host = cstring(b, user.end)?.value ?? "";
    return { socks_version: 4, socks_command: SOCKS_COMMANDS[b[1]!]!, socks_target: `${host}:${port}`, socks_user: user.value };
  },
};

/** SOCKS5: the method offer, and the request when the client sent it without waiting for the answer. */
const socks5: Signature = {
  name: "socks",
  match(b) {
    const n = u8(b, 1);
    if (b[0] !== 5 || n < 1 || n > 32 || b.length < 2 + n) return null;
    for (let i = 2; i < 2 + n; i++) if (b[i]! > 0x09 && (b[i]! < 0x80 || b[i] === 0xff)) return null;
    const fields: GuessFields = { socks_version: 5, socks_command: null, socks_target: null };
    const at = 2 + n;
    const command = u8(b, at + 1);
    if (b[at] !== 5 || command < 1 || command > 3 || b[at + 2] !== 0) return fields;
    fields.socks_command = SOCKS_COMMANDS[command]!;
    const type = u8(b, at + 3);
    const addressEnd = type === 1 ? at + 8 : type === 3 ? at + 5 + u8(b, at + 4) : type === 4 ? at + 20 : -1;
    const port = u16be(b, addressEnd);
    if (port < 0) return fields;
    const host = type === 1 ? ipv4(b, at + 4) : type === 3 ? shown(b, at + 5, addressEnd) : `[${b.subarray(at + 4, at + 20).toString("hex").replace(/(.{4})(?!$)/g, "$1:")}]`;
    fields.socks_target = `${host}:${port}`;
    return fields;
  },
};

/** A BER length at `at`: the value and where the contents start, or null (definite forms up to 4 bytes). */
function berLength(b: Buffer, at: number): { value: number; start: number } | null {
  const first = u8(b, at);
  if (first < 0) return null;
  if (first < 0x80) return { value: first, start: at + 1 };
  const n = first & 0x7f;
  if (n < 1 || n > 4 || at + 1 + n > b.length) return null;
  let value = 0;
  for (let i = 0; i < n; i++) value = value * 256 + b[at + 1 + i]!;
  return { value, start: at + 1 + n };
}

const LDAP_OPERATIONS = new Map([
  [0, "bind"],
  [2, "unbind"],
  [3, "search"],
  [6, "modify"],
  [8, "add"],
  [10, "delete"],
  [12, "modify_dn"],
  [14, "compare"],
  [16, "abandon"],
  [23, "extended"],
]);

/** LDAPMessage: SEQUENCE { messageID INTEGER, protocolOp [APPLICATION n] ... }. */
const ldap: Signature = {
  name: "ldap",
  match(b) {
    const sequence = b[0] === 0x30 ? berLength(b, 1) : null;
    if (!sequence || u8(b, sequence.start) !== 0x02) return null;
    const idLength = u8(b, sequence.start + 1);
    if (idLength < 1 || idLength > 4) return null;
    const tag = u8(b, sequence.start + 2 + idLength);
    const operation = LDAP_OPERATIONS.get(tag & 0x1f);
    return tag >= 0 && (tag & 0xc0) === 0x40 && operation ? { ldap_operation: operation } : null;
  },
};

/** Kerberos over TCP (RFC 4120 7.2.2): a 4-byte length, then an AS-REQ ([APPLICATION 10]) or a TGS-REQ ([APPLICATION 12]). */
const kerberos: Signature = {
  name: "kerberos",
  match(b) {
    // The BER element must fill the record exactly: text such as "<?xml" or "gkrellm" has a byte 0x6c too.
    const length = u32be(b, 0);
    const element = berLength(b, 5);
    if (length < 2 || length > 0xffff || (b[4] !== 0x6a && b[4] !== 0x6c) || !element || element.start + element.value !== 4 + length) return null;
    return { kerberos_message: b[4] === 0x6a ? "as-req" : "tgs-req" };
  },
};

/**
 * Oracle TNS CONNECT (type 1) with a TNS version of 300-330 (8i to 23c): its connect data names
 * the service, "(DESCRIPTION=(CONNECT_DATA=(SID=...)))".
 */
const oracleTns: Signature = {
  name: "oracle-tns",
  match(b) {
    const version = u16be(b, 8);
    if (b.length < 34 || u16be(b, 0) < 34 || u16be(b, 2) !== 0 || b[4] !== 1 || b[5] !== 0 || u16be(b, 6) !== 0 || version < 300 || version > 330) return null;
    const length = u16be(b, 24);
    const offset = u16be(b, 26);
    return { tns_connect_data: length > 0 && offset >= 34 && offset < b.length ? shown(b, offset, offset + length, 512) : null };
  },
};

const RPC_PROGRAMS = new Map([
  [100000, "portmapper"],
  [100003, "nfs"],
  [100005, "mountd"],
  [100021, "nlockmgr"],
  [100024, "status"],
]);

/** ONC RPC over TCP: a record mark (last fragment bit and length), xid, CALL (0), RPC version 2. */
const sunrpc: Signature = {
  name: "sunrpc",
  match(b) {
    if (!(b[0]! & 0x80) || (u32be(b, 0) & 0x7fffffff) < 40 || u32be(b, 8) !== 0 || u32be(b, 12) !== 2) return null;
    const program = u32be(b, 16);
    return program < 0 ? null : { rpc_program: program, rpc_program_name: RPC_PROGRAMS.get(program) ?? null };
  },
};

/** The first key of a BSON document at `at` (the command's name in MongoDB's wire protocol). */
function bsonFirstKey(b: Buffer, at: number): string | null {
  return u32le(b, at) >= 5 && u8(b, at + 4) > 0 ? (cstring(b, at + 5, 128)?.value ?? null) : null;
}

/** MongoDB: a little-endian header whose opCode is OP_QUERY (2004) or OP_MSG (2013). */
const mongodb: Signature = {
  name: "mongodb",
  match(b) {
    const length = u32le(b, 0);
    const op = u32le(b, 12);
    if (length < 16 || length > 48 * 1024 * 1024 || (op !== 2004 && op !== 2013)) return null;
    if (op === 2013) return { mongodb_op: "msg", mongodb_collection: null, mongodb_command: u8(b, 20) === 0 ? bsonFirstKey(b, 21) : null };
    const collection = cstring(b, 20, 128);
    return { mongodb_op: "query", mongodb_collection: collection?.value ?? null, mongodb_command: collection ? bsonFirstKey(b, collection.end + 8) : null };
  },
};

const DNS_TYPES = new Map([
  [1, "A"],
  [2, "NS"],
  [5, "CNAME"],
  [6, "SOA"],
  [12, "PTR"],
  [13, "HINFO"],
  [15, "MX"],
  [16, "TXT"],
  [28, "AAAA"],
  [33, "SRV"],
  [35, "NAPTR"],
  [43, "DS"],
  [48, "DNSKEY"],
  [65, "HTTPS"],
  [251, "IXFR"],
  [252, "AXFR"],
  [255, "ANY"],
]);
const DNS_CLASSES = new Map([
  [1, "IN"],
  [3, "CH"],
  [4, "HS"],
  [255, "ANY"],
]);

/** A DNS query after TCP's 2-byte length: no answers, at most one question (none for a STATUS). */
const dns: Signature = {
  name: "dns",
  match(b) {
    const flags = u16be(b, 4);
    const opcode = (flags >> 11) & 0xf;
    const questions = u16be(b, 6);
    if (u16be(b, 0) < 12 || flags < 0 || flags & 0x8000 || opcode > 5 || u16be(b, 8) !== 0 || u16be(b, 10) !== 0 || u16be(b, 12) > 2) return null;
    if (questions === 0) return opcode === 2 ? { dns_opcode: "status", dns_qname: null, dns_qtype: null, dns_qclass: null } : null;
    if (questions !== 1) return null;
    const labels: string[] = [];
    let at = 14;
    for (let size = u8(b, at); size !== 0; size = u8(b, at)) {
      // A compression pointer or a label past 63 bytes has no place in a query's only name.
      if (size < 0 || size > 63 || at + 1 + size > b.length || labels.length >= 127) return null;
      labels.push(shown(b, at + 1, at + 1 + size, 63));
      at += 1 + size;
    }
    const type = u16be(b, at + 1);
    const klass = u16be(b, at + 3);
    if (klass < 0) return null;
    return {
      dns_opcode: opcode === 0 ? "query" : String(opcode),
      dns_qname: labels.length === 0 ? "." : labels.join(".").slice(0, 255),
      dns_qtype: DNS_TYPES.get(type) ?? `TYPE${type}`,
      dns_qclass: DNS_CLASSES.get(klass) ?? `CLASS${klass}`,
    };
  },
};

/** OpenVPN over TCP: a 2-byte length, then P_CONTROL_HARD_RESET_CLIENT_V2 or _V3 with key id 0. */
const openvpn: Signature = {
  name: "openvpn",
  match(b) {
    const length = u16be(b, 0);
    return length >= 14 && length <= 1500 && (b[2] === 7 << 3 || b[2] === 10 << 3) ? {} : null;
  },
};

/** Modbus/TCP's MBAP header: protocol id 0, a length that covers the unit id and PDU, a request function code. */
const modbus: Signature = {
  name: "modbus",
  match(b) {
    const length = u16be(b, 4);
    const fn = u8(b, 7);
    if (u16be(b, 2) !== 0 || length < 2 || length > 254 || 6 + length > b.length || fn < 1 || fn > 127) return null;
    return { modbus_unit: b[6]!, modbus_function: fn };
  },
};

/** In the order they are tried: the ones with more fixed values first. */
export const LENGTH_SIGNATURES: readonly Signature[] = [socks4, socks5, ldap, kerberos, oracleTns, sunrpc, mongodb, dns, openvpn, modbus];
