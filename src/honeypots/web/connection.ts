/**
 * One HTTP/1.x connection, plain or inside TLS: requests read as they arrive (keep-alive and
 * pipelining included), each answered in order, with every bound a flood could push on: the
 * head is held in a bounded buffer until it is complete (past the limits the server's own
 * 400 or 414 answers and the connection closes), a body is kept up to `bodyMax` bytes and the
 * rest only counted, and a connection makes at most `maxRequests` requests (Apache's
 * MaxKeepAliveRequests).
 */
import { InputBuffer } from "../shared/session.ts";
import { BodyReader, framing, type HeadError, header, type HeadLimits, parseHead, type RequestHead } from "./http-parse.ts";
import type { PageContext, Persona, Reply } from "./persona.ts";
import { clientHost } from "./site.ts";

export interface Transport {
  write(bytes: Uint8Array): void;
  /** Closes after what was written has gone out. */
  end(): void;
}

export interface CompletedRequest {
  head: RequestHead;
  /** The body as received (decoded from chunked), at most `bodyMax` bytes. */
  body: Buffer;
  /** Body bytes received in all, kept or not. */
  bodySize: number;
  truncated: boolean;
  /** The connection ended before the request did. */
  incomplete: boolean;
  /** 1 for the connection's first request. */
  index: number;
}

export interface InvalidRequest {
  reason: string;
  /** The bytes of the head as far as they went (bounded by the head limit). */
  raw: Buffer;
  status: number;
}

export interface ConnectionHooks {
  /** A whole request: what to answer. */
  request(req: CompletedRequest): Reply;
  /** The connection closed in the middle of a request: record what came. */
  abandoned(req: CompletedRequest): void;
  /** A request the server refused to parse (answered `status`, then the connection closed). */
  invalid(info: InvalidRequest): void;
}

export interface ConnectionOptions {
  persona: Persona;
  hostname: string;
  tls: boolean;
  /** Plain HTTP arrived on the TLS port: every request gets the "speaking plain HTTP" 400. */
  plainToTls: boolean;
  bodyMax: number;
  maxRequests: number;
  limits: HeadLimits;
}

/** Bytes of an unfinished head kept: a request line and 100 fields of typical size fit well within. */
export const MAX_HEAD_BYTES = 64 * 1024;

const APACHE_DETAIL: Partial<Record<HeadError, string>> = {
  field_too_long: "Size of a request header field exceeds server limit.",
  too_many_fields: "The number of request header fields exceeds this server's limit.",
  bad_header: "Request header field is missing ':' separator.",
};

export class HttpConnection {
  private readonly input = new InputBuffer(MAX_HEAD_BYTES);
  private current: { head: RequestHead; body: BodyReader | null } | null = null;
  private count = 0;
  private open = true;

  constructor(
    private readonly transport: Transport,
    private readonly opts: ConnectionOptions,
    private readonly hooks: ConnectionHooks,
  ) {}

  get requests(): number {
    return this.count;
  }

  /** Bytes from the client. */
  feed(chunk: Uint8Array): void {
    let data: Buffer | null = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (this.open && data !== null && data.length > 0) {
      if (this.current?.body) {
        const used = this.current.body.feed(data);
        data = data.subarray(used);
        if (this.current.body.error) return this.refuse(400, this.current.body.error, Buffer.alloc(0));
        if (this.current.body.done) this.complete(false);
        continue;
      }
      // Only what fits in the head buffer is parsed; the rest of a large chunk waits its turn.
      const room = MAX_HEAD_BYTES - this.input.length;
      const after = data.subarray(Math.min(room, data.length));
      this.input.push(data.subarray(0, Math.min(room, data.length)));
      data = null;
      const result = parseHead(this.input.view(), this.opts.limits);
      if (result.kind === "more") {
        if (this.input.length < MAX_HEAD_BYTES) return;
        const noLine = this.input.view().indexOf(0x0a) < 0;
        return this.refuse(noLine ? 414 : 400, "request head too long", this.input.view(), noLine ? "line_too_long" : "field_too_long");
      }
      if (result.kind === "error") return this.refuse(result.error === "line_too_long" ? 414 : 400, result.error, this.input.view(), result.error);
      const { head, consumed } = result;
      const frame = framing(head);
      if (frame.kind === "error") return this.refuse(400, frame.reason, this.input.view().subarray(0, consumed));
      const rest = Buffer.concat([this.input.view().subarray(consumed), after]);
      this.input.consume(this.input.length);
      this.count++;
      this.current = { head, body: frame.kind === "none" ? null : new BodyReader(frame, this.opts.bodyMax) };
      if (this.current.body && head.version === "HTTP/1.1" && /^100-continue$/i.test(header(head, "expect") ?? "")) {
        this.transport.write(Buffer.from("HTTP/1.1 100 Continue\r\n\r\n"));
      }
      if (!this.current.body) this.complete(false);
      data = rest;
    }
  }

  /** The transport closed: a request still being read is recorded as it is. */
  closed(): void {
    if (!this.open) return;
    this.open = false;
    if (this.current) this.hooks.abandoned(this.snapshot(true));
    else if (this.input.length > 0) this.hooks.invalid({ reason: "incomplete request head", raw: Buffer.from(this.input.view()), status: 0 });
  }

  private snapshot(incomplete: boolean): CompletedRequest {
    const { head, body } = this.current!;
    return { head, body: body ? body.body() : Buffer.alloc(0), bodySize: body?.size ?? 0, truncated: body?.truncated ?? false, incomplete, index: this.count };
  }

  private keepAlive(head: RequestHead, status: number): boolean {
    if (this.opts.plainToTls || this.count >= this.opts.maxRequests || (status >= 400 && ![403, 404, 405].includes(status))) return false;
    const connection = (header(head, "connection") ?? "").toLowerCase();
    return head.version === "HTTP/1.1" ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  }

  private complete(incomplete: boolean): void {
    const request = this.snapshot(incomplete);
    this.current = null;
    const { head } = request;
    const reply = this.hooks.request(request);
    if (head.version === "HTTP/0.9" || this.bodyOnly()) {
      this.transport.write(typeof reply.body === "string" ? Buffer.from(reply.body, "latin1") : reply.body);
      return this.close();
    }
    const keepAlive = this.keepAlive(head, reply.status);
    this.transport.write(this.opts.persona.frame(reply, { head: head.method === "HEAD", keepAlive, remaining: this.opts.maxRequests - this.count + 1 }));
    if (!keepAlive) this.close();
  }

  /**
   * HTTP/0.9 has no status line or headers: the body alone, then the end of the connection. Apache's
   * mod_ssl answers plain HTTP on its TLS port that way too (its 400 page with no headers), which
   * is what nmap's signature for it expects.
   */
  private bodyOnly(): boolean {
    return this.opts.plainToTls && this.opts.persona.kind === "apache";
  }

  private pageContext(head: Partial<RequestHead> | undefined): PageContext {
    return { method: head?.method ?? "GET", ...clientHost(head?.headers ?? [], this.opts.tls, this.opts.hostname) };
  }

  /** Answers a request the server will not parse with its error page, and closes. */
  private refuse(status: number, reason: string, raw: Uint8Array, error?: HeadError): void {
    const head = this.current?.head;
    // A request whose head was fine but whose body was not is recorded as a request, cut short.
    if (this.current) this.hooks.abandoned(this.snapshot(true));
    else this.hooks.invalid({ reason, raw: Buffer.from(raw), status });
    this.current = null;
    const apache = this.opts.persona.kind === "apache";
    const detail = apache ? (error ? APACHE_DETAIL[error] : undefined) : error === "field_too_long" || error === "too_many_fields" ? "header" : undefined;
    const ctx = { ...this.pageContext(head), detail, plainToTls: this.opts.plainToTls };
    const reply = this.opts.persona.errorReply(status, ctx);
    this.transport.write(this.bodyOnly() ? Buffer.from(String(reply.body), "latin1") : this.opts.persona.frame(reply, { head: false, keepAlive: false, remaining: 0 }));
    this.close();
  }

  private close(): void {
    this.open = false;
    this.input.consume(this.input.length);
    this.transport.end();
  }
}
