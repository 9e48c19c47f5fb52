/**
 * TTY logs: each shell session's terminal recorded in asciicast v2 (a JSON header line, then
 * `[seconds, "o"|"i", text]` per output and input), as Cowrie keeps its `tty` logs. The file
 * grows on disk as the session goes (a partial `.part` file), never in memory; past
 * `maxBytes` nothing more is added (the file stays valid, only shorter). When the session
 * ends it is renamed to its SHA-256, as Cowrie names its tty logs (the same bytes are kept
 * once), and `cowrie.log.closed` says where it is, with Cowrie's fields: `ttylog` (relative to
 * the pot's folder), `size`, `shasum`, `duplicate`, `duration`. The node agent ships it to
 * Core (docs/protocol.md#sessionrecording).
 */
import { createHash, randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { CowrieSession } from "./session.ts";

export interface TtyLogOptions {
  /** Folder for the recordings, relative to the pot's folder (its working directory). */
  dir: string;
  maxBytes: number;
}

const decoder = new TextDecoder();

export class TtyRecorder {
  private readonly started = performance.now();
  private readonly part: string;
  private fd: number | null;
  private size = 0;
  private full = false;

  constructor(
    private readonly opts: TtyLogOptions,
    private readonly session: CowrieSession,
    size: { width: number; height: number },
    term: string | null,
  ) {
    mkdirSync(opts.dir, { recursive: true });
    this.part = join(opts.dir, `${session.id}-${randomBytes(4).toString("hex")}.part`);
    this.fd = openSync(this.part, "w", 0o600);
    const header = { version: 2, width: size.width, height: size.height, timestamp: Math.floor(Date.now() / 1000), env: { SHELL: "/bin/bash", TERM: term ?? "xterm" } };
    this.append(`${JSON.stringify(header)}\n`);
  }

  output(data: string | Uint8Array): void {
    this.event("o", data);
  }

  input(data: string | Uint8Array): void {
    this.event("i", data);
  }

  private event(kind: "o" | "i", data: string | Uint8Array): void {
    if (this.fd === null || this.full) return;
    const text = typeof data === "string" ? data : decoder.decode(data);
    if (text.length === 0) return;
    const t = Math.round(performance.now() - this.started) / 1000;
    const line = `${JSON.stringify([t, kind, text])}\n`;
    if (this.size + Buffer.byteLength(line) > this.opts.maxBytes) {
      this.full = true;
      return;
    }
    this.append(line);
  }

  private append(text: string): void {
    const bytes = Buffer.from(text);
    writeSync(this.fd!, bytes);
    this.size += bytes.length;
  }

  /** Ends the recording (once) and emits cowrie.log.closed. */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    const data = readFileSync(this.part);
    const shasum = createHash("sha256").update(data).digest("hex");
    const ttylog = join(this.opts.dir, `${shasum}.cast`);
    const duplicate = existsSync(ttylog);
    if (duplicate) unlinkSync(this.part);
    else renameSync(this.part, ttylog);
    const duration = ((performance.now() - this.started) / 1000).toFixed(1);
    this.session.emit("cowrie.log.closed", { ttylog, size: data.length, shasum, duplicate, duration }, `Closing TTY Log: ${ttylog} after ${duration} seconds`);
  }
}
