/**
 * A file an attacker uploads over SCP or SFTP: written at offsets into a temporary file in the
 * pot's outbox (mode 0600, never executed), bounded by download_max_bytes, and on close taken
 * under its SHA-256 and recorded as cowrie.session.file_upload (docs/artifacts.md).
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import type { Outbox } from "../../shared/outbox.ts";
import type { CowrieSession } from "../session.ts";

export class Upload {
  private fd: number | null;
  private readonly tmp: string;
  size = 0;
  truncated = false;

  constructor(
    private readonly outbox: Outbox,
    private readonly session: CowrieSession,
    /** The path in the fake filesystem the attacker wrote to. */
    readonly path: string,
    private readonly maxBytes: number,
    private readonly protocol: "sftp" | "scp",
  ) {
    this.tmp = outbox.tempPath();
    this.fd = openSync(this.tmp, "wx", 0o600);
  }

  write(offset: number, data: Uint8Array): void {
    if (this.fd === null) return;
    const room = this.maxBytes - offset;
    if (room <= 0) {
      this.truncated = true;
      return;
    }
    const take = data.length > room ? data.subarray(0, room) : data;
    if (take.length < data.length) this.truncated = true;
    writeSync(this.fd, take, 0, take.length, offset);
    this.size = Math.max(this.size, offset + take.length);
  }

  /** Closes the file; an empty one (a touch, an aborted put) is not worth an artifact. */
  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    if (this.size === 0) {
      rmSync(this.tmp, { force: true });
      return;
    }
    const filename = this.path.slice(this.path.lastIndexOf("/") + 1);
    const meta = { source: "cowrie.session.file_upload", session: this.session.id, url: this.path, filename, truncated: this.truncated };
    const saved = this.outbox.adopt(this.tmp, meta);
    const fields: Record<string, unknown> = { filename, url: this.path, destfile: this.path, outfile: saved.outfile, shasum: saved.sha256, size: saved.size, protocol_upload: this.protocol };
    let message = `Uploaded file "${filename}" to ${saved.outfile}`;
    if (this.truncated) {
      fields.truncated = true;
      fields.limit = this.maxBytes;
      message += ` (stopped at the size limit of ${this.maxBytes} bytes)`;
    }
    this.session.emit("cowrie.session.file_upload", fields, message);
  }
}
