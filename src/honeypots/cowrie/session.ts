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
import type { Shell, ShellResult } from "./shell/shell.ts";
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
}

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
    });
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

  /** Runs one command line through the shell and records it and what it tried. */
  command(shell: Shell, line: string): ShellResult {
    if (line.trim()) this.emit("cowrie.command.input", { input: line }, `CMD: ${line}`);
    const result = shell.run(line);
    for (const effect of result.effects) {
      if (effect.kind === "command.failed") this.emit("cowrie.command.failed", { input: effect.input }, `Command not found: ${effect.input}`);
      else this.emit("cowrie.session.file_download", { url: effect.url }, `Download attempt (not fetched): ${effect.url}`);
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
