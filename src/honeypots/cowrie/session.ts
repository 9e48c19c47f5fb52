/**
 * One attacker connection and the Cowrie-compatible events it produces. Field names, event ids and
 * message texts follow Cowrie 2.9's JSON output, so queries written for Cowrie keep working; every
 * event carries the connection's addresses and `dst_port` (Cowrie puts them on connect only).
 */
import { randomBytes } from "node:crypto";
import type { Socket } from "node:net";
import type { Logger } from "pino";
import { plainIp } from "../shared/address.ts";
import type { EventSink } from "../shared/sink.ts";
import type { Outbox } from "../shared/outbox.ts";
import type { Fetcher } from "./downloads/fetcher.ts";
import type { FetchRequest, FetchResult, Shell, ShellResult } from "./shell/shell.ts";
import type { TerminalLimits } from "./terminal.ts";
import type { TtyLogOptions } from "./ttylog.ts";
import type { Rule } from "./userdb.ts";

/** What both front doors (SSH and Telnet) need to run a session. */
export interface SessionOptions {
  hostname: string;
  userdb: Rule[];
  maxAuthTries: number;
  loginTimeoutMs: number;
  limits: TerminalLimits;
  /** Where shell sessions are recorded; null: not recorded. */
  ttylog: TtyLogOptions | null;
  sink: EventSink;
  logger: Logger;
  /** Real fetches for the download commands (docs/artifacts.md); without it they only record. */
  fetcher?: Fetcher;
  /** The size limit of a download or upload, named in the event of one that was cut at it. */
  downloadMaxBytes?: number;
  /** Where captured files go for the node to send to Core (SCP and SFTP uploads). */
  outbox?: Outbox;
}

/** A line whose fetched script fetches again (`wget -O- x | sh`) runs at most this many times. */
const FETCH_ROUNDS = 3;

export interface Endpoint {
  src_ip: string;
  src_port: number;
  dst_ip: string;
  dst_port: number;
  protocol: "ssh" | "telnet";
  sensor: string;
}

export class CowrieSession {
  /** 12 hex characters, like Cowrie's session ids. */
  readonly id = randomBytes(6).toString("hex");
  private readonly startedAt = performance.now();
  private closed = false;

  constructor(
    private readonly sink: EventSink,
    readonly endpoint: Endpoint,
    private readonly fetcher?: Fetcher,
    private readonly downloadMaxBytes = 0,
  ) {}

  /** A session for a connection just accepted; emits cowrie.session.connect. */
  static accepted(socket: Socket, protocol: Endpoint["protocol"], opts: SessionOptions): CowrieSession {
    const session = new CowrieSession(opts.sink, {
      src_ip: plainIp(socket.remoteAddress),
      src_port: socket.remotePort ?? 0,
      dst_ip: plainIp(socket.localAddress),
      dst_port: socket.localPort ?? 0,
      protocol,
      sensor: opts.hostname,
    }, opts.fetcher, opts.downloadMaxBytes);
    session.connected();
    return session;
  }

  emit(eventid: string, fields: Record<string, unknown>, message: string): void {
    const { src_ip, src_port, dst_ip, dst_port, protocol, sensor } = this.endpoint;
    this.sink.emit({ eventid, ...fields, message, sensor, src_ip, src_port, dst_ip, dst_port, session: this.id, protocol });
  }

  private connected(): void {
    const { src_ip, src_port, dst_ip, dst_port } = this.endpoint;
    this.emit("cowrie.session.connect", {}, `New connection: ${src_ip}:${src_port} (${dst_ip}:${dst_port}) [session: ${this.id}]`);
  }

  login(username: string, password: string, ok: boolean): void {
    const outcome = ok ? "succeeded" : "failed";
    this.emit(`cowrie.login.${ok ? "success" : "failed"}`, { username, password }, `login attempt [${username}/${password}] ${outcome}`);
  }

  /**
   * Runs one command line through the shell and records it and what it tried. A line with
   * downloads is run once to learn what it fetches, put back, and run again with the results
   * (the shell does no I/O); only then is it answered, so the result is a promise.
   */
  command(shell: Shell, line: string): ShellResult | Promise<ShellResult> {
    if (line.trim()) this.emit("cowrie.command.input", { input: line }, `CMD: ${line}`);
    const restore = shell.snapshot();
    const result = shell.run(line);
    if (result.pending.length === 0) return this.recorded(result);
    return this.withDownloads(shell, line, restore, result.pending);
  }

  private async withDownloads(shell: Shell, line: string, restore: () => void, pending: FetchRequest[]): Promise<ShellResult> {
    let result: ShellResult;
    for (let round = 1; ; round++) {
      restore();
      await Promise.all(pending.map(async (req) => shell.fetchedResult(req, await this.fetch(req))));
      restore = shell.snapshot();
      result = shell.run(line);
      if (result.pending.length === 0 || round >= FETCH_ROUNDS) break;
      pending = result.pending;
    }
    shell.clearFetched();
    return this.recorded(result);
  }

  private async fetch(req: FetchRequest): Promise<FetchResult> {
    if (!this.fetcher) return { ok: false, error: "disabled", message: "downloads are not fetched" };
    const filename = (() => {
      try {
        return decodeURIComponent(new URL(req.url).pathname.split("/").pop() ?? "");
      } catch {
        return "";
      }
    })();
    return this.fetcher.fetch(req, { source: "cowrie.session.file_download", session: this.id, filename });
  }

  private recorded(result: ShellResult): ShellResult {
    for (const effect of result.effects) {
      if (effect.kind === "command.failed") {
        this.emit("cowrie.command.failed", { input: effect.input }, `Command not found: ${effect.input}`);
        continue;
      }
      const { url, result: fetched, destfile } = effect;
      if (!fetched) this.emit("cowrie.session.file_download", { url }, `Download attempt (not fetched): ${url}`);
      else if (!fetched.ok) this.emit("cowrie.session.file_download.failed", { url, reason: fetched.message }, `Attempt to download file(s) from URL (${url}) failed`);
      else {
        const fields: Record<string, unknown> = { url, outfile: fetched.outfile, shasum: fetched.sha256, destfile: destfile ?? "", size: fetched.size };
        let message = `Downloaded URL (${url}) with SHA-256 ${fetched.sha256} to ${fetched.outfile}`;
        if (fetched.truncated) {
          fields.truncated = true;
          fields.limit = this.downloadMaxBytes;
          message += ` (stopped at the size limit of ${this.downloadMaxBytes} bytes)`;
        }
        this.emit("cowrie.session.file_download", fields, message);
      }
    }
    return result;
  }

  /** Emits cowrie.session.closed once, whichever side ends the connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const duration = Math.round(performance.now() - this.startedAt) / 1000;
    this.emit("cowrie.session.closed", { duration }, `Connection lost after ${Math.round(duration)} seconds`);
  }
}
