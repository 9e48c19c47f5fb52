/**
 * A file an attacker pushes (sync SEND, or an APK streamed to `cmd package install`): its bytes
 * go to the pot's outbox as they arrive (mode 0600, never executed), up to `maxBytes`; past that
 * the rest is counted and dropped and the file is marked truncated. On finish the file is taken
 * under its SHA-256 for the node to send to Core as an artifact (docs/artifacts.md). When the
 * outbox is full the bytes are only hashed, and the event says so with a null `outfile`.
 */
import { type Outbox, type OutboxFile, OutboxFull, type SightingMeta } from "../shared/outbox.ts";
import { HEAD_BYTES } from "./filesystem.ts";

export interface Captured {
  shasum: string;
  /** `outbox/<sha256>`, or null: empty, or the outbox was full. */
  outfile: string | null;
  /** Bytes kept (and hashed). */
  size: number;
  /** Bytes the client sent, kept or not. */
  sent: number;
  truncated: boolean;
}

export class PushCapture {
  private file: OutboxFile | null = null;
  private readonly hasher = new Bun.CryptoHasher("sha256");
  private readonly headParts: Buffer[] = [];
  private headSize = 0;
  size = 0;
  sent = 0;
  truncated = false;

  constructor(
    outbox: Outbox,
    private readonly maxBytes: number,
  ) {
    try {
      this.file = outbox.begin();
    } catch (err) {
      if (!(err instanceof OutboxFull)) throw err;
    }
  }

  write(bytes: Uint8Array): void {
    this.sent += bytes.length;
    const room = this.maxBytes - this.size;
    if (room <= 0) {
      this.truncated = this.truncated || bytes.length > 0;
      return;
    }
    const take = bytes.length > room ? bytes.subarray(0, room) : bytes;
    if (take.length < bytes.length) this.truncated = true;
    this.hasher.update(take);
    this.file?.write(take);
    this.size += take.length;
    if (this.headSize < HEAD_BYTES) {
      const part = Buffer.from(take.subarray(0, HEAD_BYTES - this.headSize));
      this.headParts.push(part);
      this.headSize += part.length;
    }
  }

  /** The first bytes, for the fake shell's `cat`. */
  head(): Buffer {
    return Buffer.concat(this.headParts);
  }

  finish(meta: SightingMeta): Captured {
    const shasum = this.hasher.digest("hex");
    let outfile: string | null = null;
    if (this.file && this.size > 0) outfile = this.file.finish({ ...meta, truncated: this.truncated }).outfile;
    else this.file?.abort();
    this.file = null;
    return { shasum, outfile, size: this.size, sent: this.sent, truncated: this.truncated };
  }

  /** The connection ended before DONE: nothing is kept. */
  abort(): void {
    this.file?.abort();
    this.file = null;
  }
}
