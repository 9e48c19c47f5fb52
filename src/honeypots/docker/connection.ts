/**
 * One TCP connection to the fake daemon, one session: HTTP/1.1 requests in order (the Docker
 * client keeps connections alive and never pipelines), a `wait` that holds its connection until
 * the container exits, and hijacked attach/exec streams that turn the connection into the
 * container's stdio. Request bodies are bounded (JSON) or streamed to the outbox (archives).
 */
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { OutboxFull, type Outbox, type OutboxFile } from "../shared/outbox.ts";
import { PotSession, printable } from "../shared/session.ts";
import type { EventSink } from "../shared/sink.ts";
import { type DockerApi, goJson, type Reply, tarName } from "./api.ts";
import { chunk, frame, LAST_CHUNK, protocolError, type RequestHead, RequestParser, responseHead } from "./http.ts";
import { match, type Match } from "./routes.ts";
import type { Container } from "./state.ts";
import { ShellStdin } from "./stdin.ts";

export interface ConnectionContext {
  api: DockerApi;
  sink: EventSink;
  outbox: Outbox;
  limits: { bodyMax: number; uploadMax: number };
  logger: Logger;
}

/** Go writes a body of up to 2 kB with Content-Length and a longer one chunked. */
const CHUNKING_THRESHOLD = 2048;
/** Answers not yet taken by a client that does not read: past this, reading stops until it drains. */
const MAX_UNSENT = 1024 * 1024;
/** How much of a request body the docker.request event shows. */
const EVENT_BODY = 4096;
const SLICE = 16 * 1024;

interface Pending {
  head: RequestHead;
  match: Match;
  chunks: Buffer[];
  size: number;
  upload: { file: OutboxFile | null; first: Buffer; size: number; truncated: boolean; done?: () => void } | null;
}

export class Connection {
  private readonly session: PotSession;
  private readonly parser = new RequestParser();
  private mode: "http" | "waiting" | "hijacked" | "closed" = "http";
  private req: Pending | null = null;
  private clientDone = false;
  private draining = false;
  private requests = 0;
  private closeReason = "";
  /** The shell reading a hijacked stream's stdin, if it has one. */
  private shell: ShellStdin | null = null;
  /** What to undo when the connection closes: registrations with the state, unfinished uploads. */
  private readonly cleanups = new Set<() => void>();

  constructor(
    private readonly socket: Socket,
    private readonly ctx: ConnectionContext,
  ) {
    // A hijacked client half-closes its side once its stdin is done, and still reads the output.
    socket.allowHalfOpen = true;
    this.session = PotSession.accepted(socket, "docker", "http", ctx.sink);
    socket.on("data", (data: Buffer) => this.guard(() => this.data(data)));
    socket.on("end", () => this.guard(() => this.end()));
    socket.on("close", () => this.closed());
  }

  /** Whatever the bytes, a bug costs this connection only. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.ctx.logger.warn({ err, session: this.session.id }, "docker connection failed");
      this.closeReason ||= "internal error";
      this.socket.destroy();
    }
  }

  private data(data: Buffer): void {
    // In slices, so a body streamed in large reads is taken as it comes rather than held whole.
    for (let at = 0; at < data.length && this.mode !== "closed"; at += SLICE) {
      if (this.mode === "hijacked") return this.shell?.input(data.subarray(at));
      if (!this.parser.push(data.subarray(at, at + SLICE))) {
        this.closeReason = "input buffer full";
        this.socket.destroy();
        return;
      }
      if (this.mode === "http") this.pump();
    }
  }

  private pump(): void {
    while (this.mode === "http") {
      if (this.socket.writableLength > MAX_UNSENT) {
        if (this.draining) return;
        this.draining = true;
        this.socket.pause();
        this.socket.once("drain", () =>
          this.guard(() => {
            this.draining = false;
            this.socket.resume();
            this.pump();
          }),
        );
        return;
      }
      const item = this.parser.next();
      if (item.kind === "need") break;
      if (item.kind === "error") {
        this.closeReason = item.reason;
        this.socket.write(protocolError(item.status, item.reason));
        this.hangUp();
        return;
      }
      if (item.kind === "head") this.begin(item.head);
      else if (item.kind === "body") this.body(item.data);
      else this.complete();
    }
    if (this.clientDone && this.mode === "http" && !this.req) this.hangUp();
  }

  private begin(head: RequestHead): void {
    const m = match(head.method, head.target, this.ctx.api.release.api);
    const archive = "route" in m && m.route.body === "archive";
    this.req = { head, match: m, chunks: [], size: 0, upload: null };
    if (!archive && typeof head.body === "number" && head.body > this.ctx.limits.bodyMax) return this.tooLarge();
    if (archive) {
      let file: OutboxFile | null = null;
      // An archive for no container is read and dropped: the answer will be a 404.
      if (this.ctx.api.state.find(m.route.params[0] ?? "")) {
        try {
          file = this.ctx.outbox.begin();
        } catch (err) {
          if (!(err instanceof OutboxFull)) throw err;
        }
      }
      const upload: NonNullable<Pending["upload"]> = { file, first: Buffer.alloc(0), size: 0, truncated: false };
      this.req.upload = upload;
      // A connection lost mid-upload leaves no temporary file behind.
      const forget = this.onClose(() => upload.file?.abort());
      upload.done = () => {
        forget();
        upload.file?.abort();
      };
    }
    if (head.body !== 0 && (head.headers.get("expect") ?? "").toLowerCase() === "100-continue") this.socket.write("HTTP/1.1 100 Continue\r\n\r\n");
    if (head.body === 0) this.complete();
  }

  private body(data: Buffer): void {
    const r = this.req;
    if (!r) return;
    const up = r.upload;
    if (up) {
      if (up.first.length < 512) up.first = Buffer.concat([up.first, data.subarray(0, 512 - up.first.length)]);
      const room = this.ctx.limits.uploadMax - up.size;
      if (room > 0) up.file?.write(data.subarray(0, room));
      up.size += Math.min(data.length, Math.max(room, 0));
      if (data.length > room) up.truncated = true;
      return;
    }
    r.size += data.length;
    if (r.size > this.ctx.limits.bodyMax) return this.tooLarge();
    r.chunks.push(data);
  }

  private tooLarge(): void {
    const r = this.req!;
    this.req = null;
    this.closeReason = "request body too large";
    this.request(r, Buffer.alloc(0));
    this.send(r.head, { type: "json", status: 413, body: { message: "http: request body too large" } }, true);
    this.hangUp();
  }

  private request(r: Pending, body: Buffer): void {
    this.requests++;
    const q = r.head.target.indexOf("?");
    this.session.emit("request", {
      method: r.head.method.slice(0, 32),
      path: (q < 0 ? r.head.target : r.head.target.slice(0, q)).slice(0, 2048),
      query: q < 0 ? "" : r.head.target.slice(q + 1, q + 1 + 2048),
      user_agent: (r.head.headers.get("user-agent") ?? "").slice(0, 512),
      body: text(body.subarray(0, EVENT_BODY)),
      body_size: r.upload ? r.upload.size : r.size,
    });
  }

  private complete(): void {
    const r = this.req;
    if (!r) return;
    this.req = null;
    const body = Buffer.concat(r.chunks);
    this.request(r, r.upload ? Buffer.alloc(0) : body);
    if ("error" in r.match) {
      if (r.match.error === "not found") return this.send(r.head, { type: "notFound" });
      return this.send(r.head, { type: "json", status: 400, body: { message: r.match.message } });
    }
    const outcome = this.ctx.api.handle({ method: r.head.method, route: r.match.route, target: r.match.target, contentType: r.head.headers.get("content-type") ?? "", body });
    for (const { event, fields } of outcome.events) this.session.emit(event, fields);
    if (outcome.reply.type === "archive") this.archive(r, outcome.reply.container);
    r.upload?.done?.();
    this.send(r.head, outcome.reply);
  }

  private archive(r: Pending, c: Container): void {
    const up = r.upload!;
    const path = r.match && "route" in r.match ? (r.match.target.query.get("path") ?? "") : "";
    const filename = (tarName(up.first) ?? path).slice(0, 1024);
    const fields = { container_id: c.id, filename, destfile: path.slice(0, 1024), url: r.head.target.slice(0, 2048), size: up.size };
    const file = up.file;
    up.file = null;
    let saved: { sha256: string; outfile: string | null };
    if (file) saved = file.finish({ source: "docker.session.file_upload", session: this.session.id, url: fields.url, filename });
    else saved = { sha256: "", outfile: null };
    this.session.emit("session.file_upload", { ...fields, shasum: saved.sha256 || null, outfile: saved.outfile, ...(up.truncated ? { truncated: true, limit: this.ctx.limits.uploadMax } : {}) });
  }

  private send(head: RequestHead, reply: Reply | { type: "notFound" }, close = !head.keepAlive): void {
    const minor = head.minor;
    const daemon = this.ctx.api.headers;
    const noBody = head.method === "HEAD";
    const write = (status: number, headers: Record<string, string>, payload: string | Buffer) => {
      const bytes = typeof payload === "string" ? Buffer.from(payload) : payload;
      const chunked = bytes.length > CHUNKING_THRESHOLD && minor === 1 && !noBody;
      this.socket.write(responseHead({ minor, status, headers, length: chunked ? "chunked" : status === 204 || status === 304 ? "none" : bytes.length, close }));
      if (!noBody && bytes.length > 0) this.socket.write(chunked ? Buffer.concat([chunk(bytes), Buffer.from(LAST_CHUNK)]) : bytes);
    };
    switch (reply.type) {
      case "notFound":
        // dockerd's NotFoundHandler is not wrapped in its middlewares: no version headers.
        write(404, { "Content-Type": "application/json" }, '{"message":"page not found"}\n');
        break;
      case "json":
        write(reply.status, { ...daemon, "Content-Type": "application/json" }, `${goJson(reply.body)}\n`);
        break;
      case "empty":
        write(reply.status, { ...daemon, ...reply.headers }, "");
        break;
      case "ping": {
        const headers = { ...daemon, "Builder-Version": "2", "Cache-Control": "no-cache, no-store, must-revalidate", "Content-Type": "text/plain; charset=utf-8", Pragma: "no-cache", Swarm: "inactive" };
        write(200, reply.head ? { ...headers, "Content-Length": "0" } : headers, reply.head ? "" : "OK");
        break;
      }
      case "stream": {
        const headers = { ...daemon, "Content-Type": reply.contentType };
        this.socket.write(responseHead({ minor, status: 200, headers, length: minor === 1 ? "chunked" : "none", close: close || minor === 0 }));
        for (const part of reply.parts) if (part.length > 0) this.socket.write(minor === 1 ? chunk(part) : part);
        if (minor === 1) this.socket.write(LAST_CHUNK);
        if (minor === 0) close = true;
        break;
      }
      case "wait":
        return this.wait(head, reply.ref, reply.condition, close);
      case "attach":
        return this.attach(head, reply);
      case "exec":
        return this.exec(head, reply);
      case "archive":
        write(200, daemon, "");
        break;
    }
    if (close) this.hangUp();
  }

  private wait(head: RequestHead, ref: string, condition: "not-running" | "next-exit" | "removed", close: boolean): void {
    let headSent = false;
    let early: number | null = null;
    let forget = () => {};
    const done = (code: number) => {
      if (!headSent) {
        early = code;
        return;
      }
      if (this.mode !== "waiting") return;
      forget();
      this.socket.write(Buffer.concat([chunk(`{"StatusCode":${code}}\n`), Buffer.from(LAST_CHUNK)]));
      this.mode = "http";
      if (close) this.hangUp();
      else this.pump();
    };
    const waiting = this.ctx.api.state.wait(ref, condition, done);
    if (waiting === "no such container") return this.send(head, { type: "json", status: 404, body: { message: `No such container: ${ref}` } });
    if (waiting === "busy") return this.send(head, { type: "json", status: 500, body: { message: "too many waiters" } });
    forget = this.onClose(waiting);
    // dockerd flushes the head at once: `docker run` waits for it before it starts the container.
    this.socket.write(responseHead({ minor: 1, status: 200, headers: { ...this.ctx.api.headers, "Content-Type": "application/json" }, length: "chunked", close }));
    headSent = true;
    this.mode = "waiting";
    if (early !== null) done(early);
  }

  private upgrade(head: RequestHead, contentType: string): void {
    this.mode = "hijacked";
    this.socket.write(
      head.upgrade
        ? `HTTP/1.1 101 UPGRADED\r\nContent-Type: ${contentType}\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n`
        : "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n",
    );
  }

  private output(multiplexed: boolean): (stream: 1 | 2, text: string) => void {
    return (stream, text) => {
      if (this.mode !== "closed" && text !== "") this.socket.write(multiplexed ? frame(stream, text) : text);
    };
  }

  private attach(head: RequestHead, reply: Extract<Reply, { type: "attach" }>): void {
    const c = reply.container;
    const state = this.ctx.api.state;
    this.upgrade(head, reply.contentType);
    for (const part of reply.logs) this.socket.write(part);
    const out = this.output(reply.multiplexed);
    if (c.status === "exited") return this.hangUp();
    const detach = state.attach(c, { write: out, end: () => this.hangUp(), started: () => this.shell?.start() });
    if (!detach) return this.hangUp();
    this.onClose(detach);
    if (reply.stdin && c.openStdin) {
      const exit = () => {
        if (!state.stop(c, 0)) this.hangUp();
      };
      this.shell = new ShellStdin({ container: c, tty: c.tty, ids: { container_id: c.id }, logged: true, exit }, state, this.session, out);
      if (c.status === "running") this.shell.start();
      else this.shell.hold();
    }
    this.shell?.input(this.parser.rest());
  }

  private exec(head: RequestHead, reply: Extract<Reply, { type: "exec" }>): void {
    const e = reply.exec;
    const state = this.ctx.api.state;
    const c = state.containers.get(e.containerId)!;
    this.upgrade(head, reply.contentType);
    const out = this.output(reply.multiplexed);
    e.running = true;
    const result = state.runExec(e);
    out(1, result.stdout);
    out(2, result.stderr);
    const finish = () => {
      e.running = false;
      e.exitCode ??= 0;
      this.hangUp();
    };
    this.onClose(() => (e.running = false));
    if (!e.attachStdin || result.finished) return finish();
    e.exitCode = null;
    this.shell = new ShellStdin({ container: c, tty: e.tty, ids: { container_id: c.id, exec_id: e.id }, logged: false, exit: finish }, state, this.session, out);
    this.shell.start();
    this.shell.input(this.parser.rest());
  }

  private end(): void {
    this.clientDone = true;
    if (this.mode === "hijacked") return this.shell?.eof();
    if (this.mode === "http" && !this.req) this.hangUp();
  }

  private hangUp(): void {
    if (this.mode === "closed") return;
    this.mode = "closed";
    this.socket.end();
  }

  /** Runs `fn` when the connection closes, unless the returned function is called first. */
  private onClose(fn: () => void): () => void {
    this.cleanups.add(fn);
    return () => this.cleanups.delete(fn);
  }

  private closed(): void {
    this.mode = "closed";
    const cleanups = [...this.cleanups];
    this.cleanups.clear();
    for (const cleanup of cleanups) cleanup();
    this.session.close({ requests: this.requests, ...(this.closeReason ? { reason: this.closeReason } : {}) });
  }
}

/** A body as text when it is UTF-8, else its printable form. */
function text(bytes: Buffer): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return printable(bytes);
  }
}
