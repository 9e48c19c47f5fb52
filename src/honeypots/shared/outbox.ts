/**
 * Files a honeypot captured (downloads, uploads), handed to the node agent, which sends them to
 * Core (src/node/file-shipper.ts, docs/artifacts.md). The contract is the `outbox/` folder in
 * the pot's working folder: the bytes as `<sha256>` and each sighting as
 * `<sha256>.<id>.json` = `{"kind", "meta"}`, both written under a temporary name and renamed.
 * Files are mode 0600 in a 0700 folder: never executable, never run.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

export const OUTBOX = "outbox";

/** The outbox holds `maxBytes` already (Core unreachable for long, or a flood of downloads). */
export class OutboxFull extends Error {}

/** What is known about one sighting of a file; strings, numbers and booleans only (FileOffer.meta). */
export type SightingMeta = Record<string, string | number | boolean | null>;

export class OutboxFile {
  private readonly hasher = new Bun.CryptoHasher("sha256");
  private fd: number | null;
  size = 0;

  constructor(
    private readonly dir: string,
    private readonly tmp: string,
  ) {
    this.fd = openSync(tmp, "wx", 0o600);
  }

  write(bytes: Uint8Array): void {
    if (this.fd === null) return;
    writeSync(this.fd, bytes);
    this.hasher.update(bytes);
    this.size += bytes.length;
  }

  /** Closes the file under its hash and records a sighting; returns the hash and where it lies. */
  finish(meta: SightingMeta, kind = "artifact"): { sha256: string; size: number; outfile: string } {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    const sha256 = this.hasher.digest("hex");
    renameSync(this.tmp, join(this.dir, sha256));
    const id = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
    const sightingTmp = join(this.dir, `.tmp-${id}.json`);
    writeFileSync(sightingTmp, JSON.stringify({ kind, meta: { ...meta, seen_at: new Date().toISOString() } }), { mode: 0o600 });
    renameSync(sightingTmp, join(this.dir, `${sha256}.${id}.json`));
    return { sha256, size: this.size, outfile: `${OUTBOX}/${sha256}` };
  }

  abort(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    rmSync(this.tmp, { force: true });
  }
}

export class Outbox {
  readonly dir: string;

  /** `maxBytes` bounds what waits for the node: past it, new files are refused (OutboxFull). */
  constructor(
    base: string,
    private readonly maxBytes = Number.POSITIVE_INFINITY,
  ) {
    this.dir = join(base, OUTBOX);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Bytes waiting in the outbox (files being written included). */
  usage(): number {
    let total = 0;
    for (const name of readdirSync(this.dir)) {
      try {
        total += statSync(join(this.dir, name)).size;
      } catch {}
    }
    return total;
  }

  /** Throws OutboxFull when the outbox is at its bound. */
  private room(): void {
    if (Number.isFinite(this.maxBytes) && this.usage() >= this.maxBytes) throw new OutboxFull(`the outbox holds ${this.maxBytes} bytes or more`);
  }

  begin(): OutboxFile {
    this.room();
    return new OutboxFile(this.dir, join(this.dir, `.tmp-${randomBytes(8).toString("hex")}`));
  }

  /** A temporary file in the outbox, for bytes that arrive out of order (SFTP writes at offsets). */
  tempPath(): string {
    this.room();
    return join(this.dir, `.tmp-${randomBytes(8).toString("hex")}`);
  }

  /** Takes a finished temporary file under its hash and records a sighting. */
  adopt(tmp: string, meta: SightingMeta, kind = "artifact"): { sha256: string; size: number; outfile: string } {
    const hasher = new Bun.CryptoHasher("sha256");
    const bytes = readFileSync(tmp);
    hasher.update(bytes);
    const sha256 = hasher.digest("hex");
    renameSync(tmp, join(this.dir, sha256));
    this.sighting(sha256, meta, kind);
    return { sha256, size: bytes.length, outfile: `${OUTBOX}/${sha256}` };
  }

  sighting(sha256: string, meta: SightingMeta, kind: string): void {
    const id = `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;
    const tmp = join(this.dir, `.tmp-${id}.json`);
    writeFileSync(tmp, JSON.stringify({ kind, meta: { ...meta, seen_at: new Date().toISOString() } }), { mode: 0o600 });
    renameSync(tmp, join(this.dir, `${sha256}.${id}.json`));
  }

  put(bytes: Uint8Array, meta: SightingMeta, kind = "artifact"): { sha256: string; size: number; outfile: string } {
    const file = this.begin();
    file.write(bytes);
    return file.finish(meta, kind);
  }
}
