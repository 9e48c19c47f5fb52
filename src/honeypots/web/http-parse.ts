/**
 * HTTP/1.x requests parsed from the bytes as they arrive, the way Apache 2.4 reads them with its
 * default limits (LimitRequestLine 8190, LimitRequestFieldSize 8190, LimitRequestFields 100).
 * Hand-written rather than node:http's llhttp because llhttp refuses requests that Apache
 * answers and that bots send (bare LF line ends, unknown methods, bytes above 0x7f in the
 * path): those are exactly the requests a web honeypot must record. Header fields keep their
 * case and order, which JA4H needs.
 */

export interface RequestHead {
  method: string;
  /** The request-target as sent: path and query, still percent-encoded. */
  target: string;
  /** "HTTP/1.1", "HTTP/1.0", or "HTTP/0.9" for a request line without a version. */
  version: string;
  /** Header fields in the order sent, names with their case, values trimmed of spaces. */
  headers: [string, string][];
}

export interface HeadLimits {
  maxLine: number;
  maxField: number;
  maxFields: number;
}

export const APACHE_LIMITS: HeadLimits = { maxLine: 8190, maxField: 8190, maxFields: 100 };

export type HeadError = "line_too_long" | "field_too_long" | "too_many_fields" | "bad_request_line" | "bad_version" | "bad_header" | "no_host";

export type HeadResult = { kind: "more" } | { kind: "head"; head: RequestHead; consumed: number } | { kind: "error"; error: HeadError; head?: Partial<RequestHead> };

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const LF = 0x0a;

/** Header lookup, case-insensitive: the first value. */
export function header(head: Pick<RequestHead, "headers">, name: string): string | undefined {
  const lower = name.toLowerCase();
  return head.headers.find(([n]) => n.toLowerCase() === lower)?.[1];
}

/** Every value of a header, in order. */
export function headerValues(head: Pick<RequestHead, "headers">, name: string): string[] {
  const lower = name.toLowerCase();
  return head.headers.filter(([n]) => n.toLowerCase() === lower).map(([, v]) => v);
}

/** Control characters, space and DEL, which Apache refuses in a request-target. */
function hasControl(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return true;
  }
  return false;
}

function parseRequestLine(line: string): Partial<RequestHead> | null {
  // Apache's default HttpProtocolOptions Strict: single spaces, no control characters.
  const parts = line.split(" ");
  if (parts.length === 2 && parts[0] === "GET" && parts[1]!.startsWith("/")) return { method: "GET", target: parts[1], version: "HTTP/0.9" };
  if (parts.length !== 3) return null;
  const [method, target, version] = parts as [string, string, string];
  if (!TOKEN.test(method) || target === "" || hasControl(target)) return null;
  return { method, target, version };
}

/**
 * Reads one request head from the start of `buf` (empty lines before it are skipped, as
 * RFC 9112 2.2 allows). "more" while the head is incomplete and within the limits.
 */
export function parseHead(buf: Uint8Array, limits: HeadLimits = APACHE_LIMITS): HeadResult {
  let start = 0;
  while (start < buf.length && (buf[start] === 0x0d || buf[start] === LF)) start++;
  const firstEnd = buf.indexOf(LF, start);
  if (firstEnd < 0) return buf.length - start > limits.maxLine + 2 ? { kind: "error", error: "line_too_long" } : { kind: "more" };
  const text = (from: number, to: number) => Buffer.from(buf.subarray(from, to)).toString("latin1");
  const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);
  const requestLine = stripCr(text(start, firstEnd));
  if (requestLine.length > limits.maxLine) return { kind: "error", error: "line_too_long" };
  const parsed = parseRequestLine(requestLine);
  if (!parsed) return { kind: "error", error: "bad_request_line", head: { target: requestLine } };
  if (parsed.version === "HTTP/0.9") return { kind: "head", head: { ...(parsed as RequestHead), headers: [] }, consumed: firstEnd + 1 };
  if (!/^HTTP\/1\.[0-9]$/.test(parsed.version!)) return { kind: "error", error: "bad_version", head: parsed };

  const headers: [string, string][] = [];
  let at = firstEnd + 1;
  for (;;) {
    const end = buf.indexOf(LF, at);
    if (end < 0) {
      if (buf.length - at > limits.maxField + 2) return { kind: "error", error: "field_too_long", head: parsed };
      return { kind: "more" };
    }
    const line = stripCr(text(at, end));
    at = end + 1;
    if (line === "") break;
    if (line.length > limits.maxField) return { kind: "error", error: "field_too_long", head: parsed };
    if (headers.length >= limits.maxFields) return { kind: "error", error: "too_many_fields", head: parsed };
    const colon = line.indexOf(":");
    // A continuation line (obs-fold) or a name with spaces: Apache's Strict mode refuses both.
    if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) return { kind: "error", error: "bad_header", head: { ...parsed, headers } };
    headers.push([line.slice(0, colon), line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, "")]);
  }
  const head: RequestHead = { ...(parsed as RequestHead), headers };
  if (head.version === "HTTP/1.1" && header(head, "host") === undefined) return { kind: "error", error: "no_host", head };
  return { kind: "head", head, consumed: at };
}

export type Framing = { kind: "none" } | { kind: "length"; length: number } | { kind: "chunked" } | { kind: "error"; reason: string };

/** How the body of a request is delimited (RFC 9112 6.3). */
export function framing(head: RequestHead): Framing {
  const te = head.headers.filter(([n]) => n.toLowerCase() === "transfer-encoding").map(([, v]) => v.toLowerCase());
  if (te.length > 0) {
    const codings = te.join(",").split(",").map((c) => c.trim()).filter(Boolean);
    return codings.at(-1) === "chunked" ? { kind: "chunked" } : { kind: "error", reason: "unknown transfer coding" };
  }
  const lengths = headerValues(head, "content-length");
  if (lengths.length === 0) return { kind: "none" };
  const values = new Set(lengths.flatMap((v) => v.split(",").map((x) => x.trim())));
  const [only] = values;
  if (values.size !== 1 || !/^\d{1,15}$/.test(only!)) return { kind: "error", reason: "bad content-length" };
  const length = Number(only);
  return length === 0 ? { kind: "none" } : { kind: "length", length };
}

/** Longest chunk-size line (hex digits and extensions) and trailer section kept in view. */
const MAX_CHUNK_LINE = 1024;
const MAX_TRAILER = 8192;

/**
 * A request body read as it arrives: the first `captureMax` bytes are kept (decoded from
 * chunked), the rest only counted, so a body of any size costs at most `captureMax` bytes.
 */
export class BodyReader {
  private readonly parts: Uint8Array[] = [];
  captured = 0;
  /** Body bytes received (decoded), kept or not. */
  size = 0;
  truncated = false;
  done = false;
  error: string | null = null;
  private remaining: number;
  private state: "data" | "size" | "data-end" | "trailer" = "data";
  private line = "";
  private trailerBytes = 0;

  constructor(
    private readonly frame: Extract<Framing, { kind: "length" | "chunked" }>,
    private readonly captureMax: number,
  ) {
    this.remaining = frame.kind === "length" ? frame.length : 0;
    if (frame.kind === "chunked") this.state = "size";
  }

  body(): Buffer {
    return Buffer.concat(this.parts);
  }

  private keep(bytes: Uint8Array): void {
    this.size += bytes.length;
    const room = this.captureMax - this.captured;
    if (room <= 0) {
      if (bytes.length > 0) this.truncated = true;
      return;
    }
    const take = bytes.length > room ? bytes.subarray(0, room) : bytes;
    if (bytes.length > room) this.truncated = true;
    this.parts.push(Uint8Array.from(take));
    this.captured += take.length;
  }

  /** Takes what belongs to the body from `chunk`; returns how many bytes it took. */
  feed(chunk: Uint8Array): number {
    let at = 0;
    while (at < chunk.length && !this.done && this.error === null) {
      if (this.state === "data") {
        const n = Math.min(this.remaining, chunk.length - at);
        this.keep(chunk.subarray(at, at + n));
        at += n;
        this.remaining -= n;
        if (this.remaining === 0) {
          if (this.frame.kind === "length") this.done = true;
          else this.state = "data-end";
        }
        continue;
      }
      const nl = chunk.indexOf(LF, at);
      const end = nl < 0 ? chunk.length : nl;
      this.line += Buffer.from(chunk.subarray(at, end)).toString("latin1");
      at = nl < 0 ? chunk.length : nl + 1;
      if (this.line.length > MAX_CHUNK_LINE) {
        this.error = "chunk line too long";
        break;
      }
      if (nl < 0) break;
      const line = this.line.replace(/\r$/, "");
      this.line = "";
      if (this.state === "data-end") {
        if (line !== "") this.error = "missing CRLF after chunk data";
        this.state = "size";
      } else if (this.state === "size") {
        const m = /^([0-9A-Fa-f]{1,15})[ \t]*(;.*)?$/.exec(line);
        if (!m) this.error = "bad chunk size";
        else if ((this.remaining = Number.parseInt(m[1]!, 16)) === 0) this.state = "trailer";
        else this.state = "data";
      } else {
        this.trailerBytes += line.length + 2;
        if (line === "") this.done = true;
        else if (this.trailerBytes > MAX_TRAILER) this.error = "trailer too long";
      }
    }
    return at;
  }
}
