/**
 * Files from nodes (docs/protocol.md#file-transfer): a node offers a file by SHA-256 and size,
 * Core answers with the offset it holds, the node sends chunks from there and Core answers each
 * with the new offset. Partial files are kept on disk as `partial/<sha256>-<node_id>` (their
 * length is the offset), so a transfer cut by a lost connection or a Core restart resumes where
 * it stopped. A complete file is checked against its hash and handed to the sink of its kind.
 * The partial files are the instance's own: a node that fails over to another instance of a
 * cluster sends the file again from the start there.
 *
 * Pure file handling: the node channel carries the messages.
 */
import { closeSync, fstatSync, mkdirSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../../log";
import type { FileChunk, FileOffer, FileStatus } from "../../protocol/messages";

/** Where files of one kind go: `artifact` is docs/artifacts.md. */
export interface FileSink {
  /** Largest file of this kind Core takes. */
  readonly maxBytes: number;
  /** Records the offer's sighting; true when Core already holds the whole file (nothing to send). */
  offered(nodeId: bigint, offer: FileOffer): Promise<boolean>;
  /** Takes a complete, verified file (moves it away from `path`). */
  complete(nodeId: bigint, offer: FileOffer, path: string): Promise<void>;
}

const HASH_READ = 1024 * 1024;

export class FileReceiver {
  private readonly partialDir: string;
  /** Offers under way, by `<node_id>:<sha256>`: a chunk needs the offer it belongs to. */
  private readonly active = new Map<string, FileOffer>();

  constructor(
    dir: string,
    private readonly sinks: Record<string, FileSink>,
    private readonly logger: Logger,
  ) {
    this.partialDir = join(dir, "partial");
    mkdirSync(this.partialDir, { recursive: true, mode: 0o700 });
  }

  private partial(nodeId: bigint, sha256: string): string {
    return join(this.partialDir, `${sha256}-${nodeId}`);
  }

  async offer(nodeId: bigint, offer: FileOffer): Promise<FileStatus> {
    const { sha256 } = offer;
    const sink = this.sinks[offer.kind];
    if (!sink) return refuse(sha256, "unknown_kind", `Core takes no files of kind ${JSON.stringify(offer.kind)}`);
    if (offer.size > sink.maxBytes) return refuse(sha256, "too_large", `${offer.kind} of ${offer.size} bytes exceeds the limit of ${sink.maxBytes} bytes`);
    if (await sink.offered(nodeId, offer)) {
      this.active.delete(`${nodeId}:${sha256}`);
      rmSync(this.partial(nodeId, sha256), { force: true });
      return { sha256, offset: offer.size, complete: true };
    }
    this.active.set(`${nodeId}:${sha256}`, offer);
    const have = sizeOf(this.partial(nodeId, sha256));
    // A partial longer than the offer is not this file: start over.
    if (have > offer.size) rmSync(this.partial(nodeId, sha256), { force: true });
    const offset = have > offer.size ? 0 : have;
    if (offset > 0) this.logger.info({ node_id: nodeId.toString(), sha256, offset, size: offer.size }, "resuming a file transfer");
    if (offset === offer.size) return this.finish(nodeId, offer);
    return { sha256, offset, complete: false };
  }

  async chunk(nodeId: bigint, chunk: FileChunk): Promise<FileStatus> {
    const { sha256 } = chunk;
    const offer = this.active.get(`${nodeId}:${sha256}`);
    if (!offer) return refuse(sha256, "not_offered", "FileChunk for a file not offered on this connection; send FileOffer first");
    const path = this.partial(nodeId, sha256);
    const data = Buffer.from(chunk.data, "base64");
    const fd = openSync(path, "a", 0o600);
    try {
      const have = fstatSync(fd).size;
      // Only the next bytes are taken; anything else is answered with where to go on.
      if (chunk.offset !== have) return { sha256, offset: have, complete: false };
      if (have + data.length > offer.size) {
        closeSync(fd);
        rmSync(path, { force: true });
        this.active.delete(`${nodeId}:${sha256}`);
        return refuse(sha256, "size_mismatch", `chunk ends at ${have + data.length}, past the offered size ${offer.size}`);
      }
      writeSync(fd, data);
    } finally {
      try {
        closeSync(fd);
      } catch {}
    }
    const offset = chunk.offset + data.length;
    if (offset < offer.size) return { sha256, offset, complete: false };
    return this.finish(nodeId, offer);
  }

  /** Forgets a connection's offers (its partial files stay for the next connection). */
  disconnected(nodeId: bigint): void {
    for (const key of this.active.keys()) if (key.startsWith(`${nodeId}:`)) this.active.delete(key);
  }

  private async finish(nodeId: bigint, offer: FileOffer): Promise<FileStatus> {
    const path = this.partial(nodeId, offer.sha256);
    this.active.delete(`${nodeId}:${offer.sha256}`);
    const actual = hashFile(path);
    if (actual !== offer.sha256) {
      rmSync(path, { force: true });
      this.logger.warn({ node_id: nodeId.toString(), sha256: offer.sha256, actual }, "a transferred file does not match its hash; dropped");
      return refuse(offer.sha256, "hash_mismatch", `the received bytes hash to ${actual}`);
    }
    // Until the sink has moved the file, a new offer finds the partial and finishes again.
    await this.sinks[offer.kind]!.complete(nodeId, offer, path);
    return { sha256: offer.sha256, offset: offer.size, complete: true };
  }
}

function refuse(sha256: string, code: string, message: string): FileStatus {
  return { sha256, offset: 0, complete: false, error: { code, message } };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

export function hashFile(path: string): string {
  const hasher = new Bun.CryptoHasher("sha256");
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.allocUnsafe(HASH_READ);
    for (;;) {
      const n = readSync(fd, buf, 0, HASH_READ, null);
      if (n <= 0) break;
      hasher.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hasher.digest("hex");
}
