/**
 * HTTP/1.x as dockerd's Go net/http server speaks it, with no sockets: an incremental request
 * parser (bounded head, Content-Length and chunked bodies handed out as they arrive) and the
 * response head in Go's order. Hand-written rather than Bun.serve or node:http because the API
 * hijacks connections (`Upgrade: tcp`, then a raw stream both ways), answers an HTTP/1.0 request
 * with an HTTP/1.0 status line, and scanners (nmap's docker matches) read the exact header order:
 * the handler's headers sorted by name, then Date, then Content-Length or Transfer-Encoding.
 */
import { InputBuffer } from "../shared/session.ts";

export interface RequestHead {
  method: string;
  /** The request target as sent ("/v1.45/containers/json?all=1"). */
  target: string;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  /** Lower-case names; repeated headers joined with ", " as Go's Header.Get sees the first. */
  headers: Map<string, string>;
  /** Body length: a number, "chunked", or 0 for none. */
  body: number | "chunked";
  keepAlive: boolean;
  upgrade: boolean;
}

/** A head with a body is followed by its "body" pieces and an "end"; a head without one, by nothing. */
export type Parsed =
  | { kind: "head"; head: RequestHead }
  | { kind: "body"; data: Buffer }
  | { kind: "end" }
  | { kind: "need" }
  | { kind: "error"; status: number; reason: string };

/** Go's defaults are 1 MB; a honeypot needs far less and must hold hundreds of connections. */
export const MAX_HEAD = 64 * 1024;
const MAX_CHUNK_LINE = 4096;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

type State = { at: "head" } | { at: "length"; left: number } | { at: "done" } | { at: "chunk-size" } | { at: "chunk-data"; left: number } | { at: "chunk-crlf" } | { at: "trailer" };

/** Parses the requests of one connection in order; push bytes, then call next() until "need". */
export class RequestParser {
  private readonly input: InputBuffer;
  private state: State = { at: "head" };

  constructor(maxBuffered = MAX_HEAD * 2) {
    this.input = new InputBuffer(maxBuffered);
  }

  /** False when the bytes held would pass the bound (a head that never ends, a flood). */
  push(chunk: Uint8Array): boolean {
    return this.input.push(chunk);
  }

  /** Bytes received past the last parsed item: what a hijacked stream starts with. */
  rest(): Buffer {
    const bytes = Buffer.from(this.input.view());
    this.input.consume(bytes.length);
    return bytes;
  }

  next(): Parsed {
    const buf = this.input.view();
    switch (this.state.at) {
      case "head":
        return this.head(buf);
      case "length": {
        if (buf.length === 0) return { kind: "need" };
        const n = Math.min(buf.length, this.state.left);
        const data = Buffer.from(buf.subarray(0, n));
        this.input.consume(n);
        this.state.left -= n;
        if (this.state.left === 0) this.state = { at: "done" };
        return { kind: "body", data };
      }
      case "done":
        this.state = { at: "head" };
        return { kind: "end" };
      case "chunk-size": {
        const line = takeLine(buf, MAX_CHUNK_LINE);
        if (line === null) return { kind: "need" };
        if (line === "too long") return { kind: "error", status: 400, reason: "Bad Request" };
        this.input.consume(line.length);
        const size = /^([0-9A-Fa-f]{1,8})(;.*)?$/.exec(line.text);
        if (!size) return { kind: "error", status: 400, reason: "Bad Request" };
        const n = Number.parseInt(size[1]!, 16);
        this.state = n === 0 ? { at: "trailer" } : { at: "chunk-data", left: n };
        return this.next();
      }
      case "chunk-data": {
        if (buf.length === 0) return { kind: "need" };
        const n = Math.min(buf.length, this.state.left);
        const data = Buffer.from(buf.subarray(0, n));
        this.input.consume(n);
        this.state.left -= n;
        if (this.state.left === 0) this.state = { at: "chunk-crlf" };
        return { kind: "body", data };
      }
      case "chunk-crlf": {
        const line = takeLine(buf, 2);
        if (line === null) return { kind: "need" };
        if (line === "too long" || line.text !== "") return { kind: "error", status: 400, reason: "Bad Request" };
        this.input.consume(line.length);
        this.state = { at: "chunk-size" };
        return this.next();
      }
      case "trailer": {
        const line = takeLine(buf, MAX_CHUNK_LINE);
        if (line === null) return { kind: "need" };
        if (line === "too long") return { kind: "error", status: 400, reason: "Bad Request" };
        this.input.consume(line.length);
        if (line.text !== "") return this.next();
        this.state = { at: "head" };
        return { kind: "end" };
      }
    }
  }

  private head(buf: Buffer): Parsed {
    // Go skips empty lines before a request line (RFC 7230 3.5).
    let start = 0;
    while (start < buf.length && (buf[start] === 0x0d || buf[start] === 0x0a)) start++;
    if (start > 0) this.input.consume(start);
    const view = this.input.view();
    const end = headEnd(view);
    if (end < 0) {
      if (view.length > MAX_HEAD) return { kind: "error", status: 431, reason: "Request Header Fields Too Large" };
      // Go answers a non-HTTP first line at once, without waiting for the head to end.
      const firstLine = view.indexOf("\n");
      if (firstLine >= 0 && !requestLine(view.subarray(0, firstLine).toString("latin1").replace(/\r$/, ""))) {
        return { kind: "error", status: 400, reason: "Bad Request" };
      }
      return { kind: "need" };
    }
    if (end > MAX_HEAD) return { kind: "error", status: 431, reason: "Request Header Fields Too Large" };
    const lines = view.subarray(0, end).toString("latin1").split("\n").map((l) => l.replace(/\r$/, ""));
    this.input.consume(end);
    const first = requestLine(lines[0]!);
    if (!first) return { kind: "error", status: 400, reason: "Bad Request" };
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      if (line === "") continue;
      const colon = line.indexOf(":");
      const name = colon > 0 ? line.slice(0, colon) : "";
      if (!TOKEN.test(name)) return { kind: "error", status: 400, reason: "Bad Request: malformed MIME header line" };
      const key = name.toLowerCase();
      const value = line.slice(colon + 1).trim();
      const had = headers.get(key);
      if (had !== undefined && key === "content-length" && had !== value) return { kind: "error", status: 400, reason: "Bad Request" };
      headers.set(key, had === undefined || key === "content-length" ? value : `${had}, ${value}`);
    }
    if (first.minor === 1 && !headers.has("host")) return { kind: "error", status: 400, reason: "Bad Request: missing required Host header" };
    let body: number | "chunked" = 0;
    const te = headers.get("transfer-encoding");
    if (te !== undefined) {
      if (te.toLowerCase() !== "chunked") return { kind: "error", status: 501, reason: "Not Implemented" };
      body = "chunked";
    } else if (headers.has("content-length")) {
      const cl = headers.get("content-length")!;
      if (!/^\d{1,15}$/.test(cl)) return { kind: "error", status: 400, reason: "Bad Request: bad Content-Length" };
      body = Number(cl);
    }
    const connection = (headers.get("connection") ?? "").toLowerCase();
    const keepAlive = first.minor === 1 ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
    const head: RequestHead = { method: first.method, target: first.target, minor: first.minor, headers, body, keepAlive, upgrade: headers.has("upgrade") };
    if (body === "chunked") this.state = { at: "chunk-size" };
    else if (body > 0) this.state = { at: "length", left: body };
    return { kind: "head", head };
  }
}

function headEnd(buf: Buffer): number {
  const crlf = buf.indexOf("\r\n\r\n");
  const lf = buf.indexOf("\n\n");
  if (crlf < 0 && lf < 0) return -1;
  return Math.min(crlf < 0 ? Infinity : crlf + 4, lf < 0 ? Infinity : lf + 2);
}

function requestLine(line: string): { method: string; target: string; minor: 0 | 1 } | null {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/1\.([01])$/.exec(line);
  if (!m) return null;
  return { method: m[1]!, target: m[2]!, minor: m[3] === "1" ? 1 : 0 };
}

function takeLine(buf: Buffer, max: number): { text: string; length: number } | "too long" | null {
  const nl = buf.indexOf("\n");
  if (nl < 0) return buf.length > max + 2 ? "too long" : null;
  if (nl > max + 1) return "too long";
  return { text: buf.subarray(0, nl).toString("latin1").replace(/\r$/, ""), length: nl + 1 };
}

export const STATUS_TEXT: Record<number, string> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  404: "Not Found",
  409: "Conflict",
  413: "Request Entity Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
};

/** Go's http.TimeFormat, which toUTCString matches. */
export function httpDate(now = new Date()): string {
  return now.toUTCString();
}

/**
 * A response head as net/http writes it: the handler's headers sorted by name, then Date, then
 * the length (Content-Length, or Transfer-Encoding: chunked on HTTP/1.1), then Connection: close
 * on HTTP/1.1 when the connection ends after it.
 */
export function responseHead(opts: {
  minor: 0 | 1;
  status: number;
  headers: Record<string, string>;
  length: number | "chunked" | "none";
  close: boolean;
  date?: string;
}): string {
  const lines = [`HTTP/1.${opts.minor} ${opts.status} ${STATUS_TEXT[opts.status] ?? "Unknown"}`];
  for (const name of Object.keys(opts.headers).sort()) lines.push(`${name}: ${opts.headers[name]}`);
  lines.push(`Date: ${opts.date ?? httpDate()}`);
  if (typeof opts.length === "number" && !("Content-Length" in opts.headers)) lines.push(`Content-Length: ${opts.length}`);
  if (opts.length === "chunked" && opts.minor === 1) lines.push("Transfer-Encoding: chunked");
  if (opts.close && opts.minor === 1) lines.push("Connection: close");
  return `${lines.join("\r\n")}\r\n\r\n`;
}

/** What Go's server writes itself for a request it cannot parse, then it closes the connection. */
export function protocolError(status: number, reason: string): string {
  const text = `${status} ${reason}`;
  return `HTTP/1.1 ${text}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${text}`;
}

export function chunk(data: Uint8Array | string): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from("\r\n")]);
}

export const LAST_CHUNK = "0\r\n\r\n";

/** One frame of Docker's multiplexed stream (stdcopy): stream id, three zero bytes, big-endian size. */
export function frame(stream: 1 | 2, data: Uint8Array | string): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data) : Buffer.from(data);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(bytes.length, 4);
  return Buffer.concat([header, bytes]);
}
