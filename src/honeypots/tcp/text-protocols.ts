/**
 * Signatures of the protocols whose clients speak first in text lines: HTTP (and the request
 * lines shaped like it: RTSP, SIP), SSH's identification string, Redis (RESP and inline),
 * memcached, SMTP, IMAP, JSON-RPC, XMPP, VNC's version reply and the PROXY protocol's header.
 * Every regular expression here runs on one line of at most 8 KiB and has no nested repetition.
 */
import { FIELD_MAX, type GuessFields, type Signature, has, header, headLines, shown, text } from "./bytes.ts";

/** The methods that name HTTP even when the capture stops inside the request line. */
const HTTP_METHODS = new Set(["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "CONNECT", "TRACE", "PATCH", "PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "SEARCH", "REPORT"]);

/** `METHOD target PROTO/x.y`, the request line of HTTP, RTSP and SIP. */
const REQUEST_LINE = /^([A-Za-z][A-Za-z0-9_-]{0,31}) (\S+) (HTTP|RTSP|SIP)\/(\d\.\d)$/;

function requestLine(bytes: Buffer): { lines: string[]; method: string; target: string; proto: string; version: string } | null {
  const { lines, complete } = headLines(bytes);
  const first = lines[0];
  if (first === undefined || !complete) return null;
  const m = REQUEST_LINE.exec(first);
  return m ? { lines, method: m[1]!, target: m[2]!, proto: m[3]!, version: m[4]! } : null;
}

const http: Signature = {
  name: "http",
  match(bytes) {
    const line = requestLine(bytes);
    const fields = (method: string, path: string, version: string | null, lines: string[]): GuessFields => ({
      http_method: text(method, 32),
      http_path: text(path),
      http_version: version,
      http_host: header(lines, "Host"),
      http_user_agent: header(lines, "User-Agent"),
    });
    if (line) return line.proto === "HTTP" && line.method !== "PRI" ? fields(line.method, line.target, line.version, line.lines) : null;
    // HTTP/0.9's bare "GET /path", and a request line the capture cut before its end.
    const { lines, complete } = headLines(bytes, 1);
    const first = lines[0] ?? "";
    const simple = /^GET (\/\S*)$/.exec(first);
    if (simple && complete) return fields("GET", simple[1]!, "0.9", []);
    const space = first.indexOf(" ");
    if (!complete && space > 0 && HTTP_METHODS.has(first.slice(0, space)) && first.length > space + 1) {
      return fields(first.slice(0, space), first.slice(space + 1).split(" ")[0]!, null, []);
    }
    return null;
  },
};

/** The connection preface of HTTP/2 with prior knowledge (RFC 9113 3.4). */
const http2: Signature = { name: "http2", match: (bytes) => (has(bytes, "PRI * HTTP/2.0\r\n") ? {} : null) };

const rtsp: Signature = {
  name: "rtsp",
  match(bytes) {
    const line = requestLine(bytes);
    return line?.proto === "RTSP" ? { rtsp_method: text(line.method, 32), rtsp_uri: text(line.target), rtsp_user_agent: header(line.lines, "User-Agent") } : null;
  },
};

/** SIP scanners (SIPVicious's "friendly-scanner", sipsak) send OPTIONS or REGISTER over TCP too. */
const sip: Signature = {
  name: "sip",
  match(bytes) {
    const line = requestLine(bytes);
    if (line?.proto !== "SIP" || !/^sips?:/i.test(line.target)) return null;
    return { sip_method: text(line.method, 32), sip_uri: text(line.target), sip_user_agent: header(line.lines, "User-Agent") };
  },
};

/** RFC 4253 4.2: "SSH-protoversion-softwareversion SP comments CR LF", at most 255 characters. */
const ssh: Signature = {
  name: "ssh",
  match(bytes) {
    if (!/^SSH-\d\.\d{1,2}-/.test(bytes.subarray(0, 16).toString("latin1"))) return null;
    const first = headLines(bytes, 1, 255).lines[0] ?? "";
    return { ssh_version: text(first, 255) };
  },
};

/**
 * Commands bots send inline (telnet-style) to a Redis, the ones no other protocol starts with;
 * a RESP array is recognised by its form.
 */
const REDIS_INLINE = new Set(["PING", "INFO", "AUTH", "CONFIG", "KEYS", "FLUSHALL", "FLUSHDB", "SLAVEOF", "REPLICAOF", "MODULE", "EVAL", "CLIENT", "COMMAND", "DBSIZE", "SAVE", "BGSAVE", "ECHO", "SELECT"]);

const redis: Signature = {
  name: "redis",
  match(bytes) {
    const head = bytes.subarray(0, 64).toString("latin1");
    const resp = /^\*\d{1,6}\r\n\$(\d{1,9})\r\n/.exec(head);
    if (resp) {
      const at = resp[0].length;
      const length = Number(resp[1]);
      // Upper case for ASCII letters only, before escaping: a command name is bytes, and "\x1b" stays lower.
      const name = Buffer.from(bytes.subarray(at, Math.min(at + length, at + 64))).map((c) => (c >= 0x61 && c <= 0x7a ? c - 32 : c));
      return { redis_command: shown(name) };
    }
    // One case throughout, as bots type them: "Client string ..." is some other protocol's greeting.
    const inline = /^([A-Z]{3,9}|[a-z]{3,9})(?:[ \t][^\r\n]*)?\r?\n/.exec(head.length === 64 ? `${head}\n` : head);
    const command = inline?.[1]?.toUpperCase();
    return command && REDIS_INLINE.has(command) ? { redis_command: command } : null;
  },
};

/**
 * memcached's text protocol, lower case as its clients (and amplification scanners) send it;
 * `get` and `set` are left to Redis's inline form, which shares them.
 */
const memcached: Signature = {
  name: "memcached",
  match(bytes) {
    const m = /^(stats|version|flush_all|gets|verbosity)(?: [^\r\n]*)?\r\n/.exec(bytes.subarray(0, 300).toString("latin1"));
    return m ? { memcached_command: m[1]! } : null;
  },
};

/** A client that talks first to an SMTP port has skipped the greeting: scanners and spam bots do. */
const smtp: Signature = {
  name: "smtp",
  match(bytes) {
    const m = /^(?:EHLO|HELO)(?: ([^\r\n]*))?\r?\n/i.exec(bytes.subarray(0, FIELD_MAX + 8).toString("latin1"));
    return m ? { smtp_helo: text(m[1] ?? "") } : null;
  },
};

const imap: Signature = {
  name: "imap",
  match(bytes) {
    const m = /^[A-Za-z0-9.+_-]{1,32} (CAPABILITY|LOGIN|AUTHENTICATE|STARTTLS|ID|NOOP|LOGOUT)(?:[ \r\n]|$)/i.exec(bytes.subarray(0, 128).toString("latin1"));
    return m ? { imap_command: m[1]!.toUpperCase() } : null;
  },
};

/** JSON-RPC straight over TCP: Ethereum and Bitcoin nodes' RPC, Stratum mining pools. */
const jsonRpc: Signature = {
  name: "json-rpc",
  match(bytes) {
    const head = bytes.subarray(0, 4096).toString("latin1");
    if (!/^\s{0,16}[[{]/.test(head)) return null;
    const method = /"method"\s{0,16}:\s{0,16}"([^"\\]{1,128})"/.exec(head);
    if (!method && !head.includes('"jsonrpc"')) return null;
    return { rpc_method: method ? text(method[1]!) : null };
  },
};

const xmpp: Signature = {
  name: "xmpp",
  match(bytes) {
    const head = bytes.subarray(0, 1024).toString("latin1");
    const start = /^(?:<\?xml[^>]{0,200}>\s{0,16})?<stream:stream\b([^>]{0,800})/.exec(head);
    if (!start) return null;
    const to = /\bto=['"]([^'"]{1,255})['"]/.exec(start[1]!);
    return { xmpp_to: to ? text(to[1]!) : null };
  },
};

/** A VNC client answers the server's "RFB 003.008\n" with its own version: only after a banner. */
const vnc: Signature = {
  name: "vnc",
  match(bytes) {
    const m = /^RFB (\d{3}\.\d{3})\n/.exec(bytes.subarray(0, 12).toString("latin1"));
    return m ? { vnc_version: m[1]! } : null;
  },
};

/** HAProxy's PROXY protocol: a load balancer's header, or a scanner probing for one. */
const proxyProtocol: Signature = {
  name: "proxy-protocol",
  match(bytes) {
    if (has(bytes, "\r\n\r\n\0\r\nQUIT\n")) return { proxy_version: 2 };
    return /^PROXY (?:TCP4|TCP6|UNKNOWN)[ \r]/.test(bytes.subarray(0, 16).toString("latin1")) ? { proxy_version: 1 } : null;
  },
};

/** In the order they are tried: the more specific request lines before plain HTTP. */
export const TEXT_SIGNATURES: readonly Signature[] = [ssh, http2, rtsp, sip, http, redis, memcached, smtp, imap, jsonRpc, xmpp, vnc, proxyProtocol];
