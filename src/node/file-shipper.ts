/**
 * Ships files honeypots leave in their outbox to Core (docs/protocol.md#file-transfer,
 * docs/artifacts.md). A pot writes the bytes as `outbox/<sha256>` and one sighting per time it
 * saw them as `outbox/<sha256>.<id>.json` (`{"kind", "meta"}`), each written under a temporary
 * name and renamed, so the node never reads half a file. The node offers every sighting in turn;
 * Core answers with the offset it holds (the file's size when it has it already: nothing is
 * sent twice), the node sends chunks from there, one at a time, each answered with the new
 * offset. A sighting Core has taken is deleted, and the bytes with the last one.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log";
import type { FileStatus, MessageKind, Payload } from "../protocol/messages";

const SIGHTING = /^([0-9a-f]{64})\.([A-Za-z0-9_-]{1,64})\.json$/;
/** Raw bytes per FileChunk: ~350 KB of base64, well inside the default max_message_bytes. */
export const CHUNK_BYTES = 256 * 1024;
/** A status that does not come (Core gone quiet) is given up on, and the file offered again. */
const STATUS_TIMEOUT_MS = 30_000;
const MAX_META_KEYS = 31;

export interface ShipperOptions {
  /** Outbox folders to look in (one per installed pot), with the pot they belong to. */
  outboxes(): { potId: string; dir: string }[];
  send<K extends MessageKind>(kind: K, payload: Payload<K>): boolean;
  scanMs: number;
  /** Bytes per second at most (0: as fast as Core answers); a sensor's uplink is often thin. */
  rateBytes: number;
  chunkBytes?: number;
  logger: Logger;
}

interface Waiter {
  sha256: string;
  resolve(status: FileStatus | null): void;
}

export class FileShipper {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<void> | null = null;
  private waiter: Waiter | null = null;
  private stopped = false;
  /** Bytes Core has confirmed, for tests and logs. */
  shippedBytes = 0;

  constructor(private readonly opts: ShipperOptions) {
    this.timer = setInterval(() => this.kick(), opts.scanMs);
    this.timer.unref?.();
  }

  /** Looks at the outboxes now (a new connection to Core also ends a wait for a lost answer). */
  kick(): void {
    if (this.stopped) return;
    this.waiter?.resolve(null);
    this.running ??= this.run()
      .catch((err) => this.opts.logger.warn({ err: (err as Error).message }, "sending files to Core failed; trying again later"))
      .finally(() => {
        this.running = null;
      });
  }

  onStatus(status: FileStatus): void {
    if (this.waiter?.sha256 === status.sha256) this.waiter.resolve(status);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.waiter?.resolve(null);
    await this.running;
  }

  private async run(): Promise<void> {
    for (const { potId, dir } of this.opts.outboxes()) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names.sort()) {
        if (this.stopped) return;
        const m = SIGHTING.exec(name);
        if (!m) continue;
        const ok = await this.ship(potId, dir, name, m[1]!, m[2]!);
        if (!ok) return;
      }
    }
  }

  /** False when Core did not answer (not connected): the rest waits for the next turn. */
  private async ship(potId: string, dir: string, name: string, sha256: string, id: string): Promise<boolean> {
    const log = this.opts.logger;
    const sightingPath = join(dir, name);
    const blob = join(dir, sha256);
    let sighting: { kind?: unknown; meta?: unknown };
    let size: number;
    try {
      sighting = JSON.parse(readFileSync(sightingPath, "utf8"));
      size = statSync(blob).size;
    } catch (err) {
      log.warn({ file: sightingPath, err: (err as Error).message }, "unreadable outbox entry; removed");
      this.done(dir, sightingPath, sha256);
      return true;
    }
    const kind = typeof sighting.kind === "string" ? sighting.kind : "artifact";
    // Values are the attacker's (URLs, file names): cut to what FileOffer takes, so Core never refuses the offer itself.
    const meta: Record<string, string | number | boolean | null> = {};
    if (sighting.meta && typeof sighting.meta === "object") {
      for (const [k, v] of Object.entries(sighting.meta).slice(0, MAX_META_KEYS)) {
        if (typeof v === "string") meta[k.slice(0, 64)] = v.slice(0, 4096);
        else if (typeof v === "number" || typeof v === "boolean" || v === null) meta[k.slice(0, 64)] = v;
      }
    }
    const offer = () => this.ask(sha256, () => this.opts.send("FileOffer", { sha256, size, kind, sighting_id: `${potId}.${id}`, meta: { ...meta, pot_id: potId } }));
    let status = await offer();
    let reoffers = 0;
    const fd = openSync(blob, "r");
    try {
      const chunk = Buffer.allocUnsafe(this.opts.chunkBytes ?? CHUNK_BYTES);
      for (;;) {
        // A new connection (Core restarted while this node waited) knows no offer yet: offer again.
        if (status?.error?.code === "not_offered" && reoffers++ < 3) {
          status = await offer();
          continue;
        }
        if (!status || status.complete || status.error) break;
        const started = performance.now();
        const n = readSync(fd, chunk, 0, chunk.length, status.offset);
        if (n <= 0) {
          status = { sha256, offset: 0, complete: false, error: { code: "short_file", message: `the outbox file ends before ${size} bytes` } };
          break;
        }
        const offset = status.offset;
        status = await this.ask(sha256, () => this.opts.send("FileChunk", { sha256, offset, data: chunk.subarray(0, n).toString("base64") }));
        if (status && !status.error) this.shippedBytes += Math.max(0, status.offset - offset);
        if (this.opts.rateBytes > 0) {
          const due = (n / this.opts.rateBytes) * 1000 - (performance.now() - started);
          if (due > 0) await Bun.sleep(due);
        }
      }
    } finally {
      closeSync(fd);
    }
    if (!status) return false;
    if (status.error) log.warn({ sha256, pot_id: potId, code: status.error.code }, `Core refused a file: ${status.error.message}; dropped`);
    else log.info({ sha256, pot_id: potId, size, kind }, "file delivered to Core");
    this.done(dir, sightingPath, sha256);
    return true;
  }

  private ask(sha256: string, send: () => boolean): Promise<FileStatus | null> {
    if (this.stopped || !send()) return Promise.resolve(null);
    const { promise, resolve } = Promise.withResolvers<FileStatus | null>();
    const timer = setTimeout(() => resolve(null), STATUS_TIMEOUT_MS);
    this.waiter = {
      sha256,
      resolve: (s) => {
        clearTimeout(timer);
        this.waiter = null;
        resolve(s);
      },
    };
    return promise;
  }

  /** Removes a sighting, and the bytes once no sighting needs them. */
  private done(dir: string, sightingPath: string, sha256: string): void {
    rmSync(sightingPath, { force: true });
    const others = readdirSync(dir).some((n) => n.startsWith(`${sha256}.`) && n.endsWith(".json"));
    if (!others && existsSync(join(dir, sha256))) rmSync(join(dir, sha256), { force: true });
  }
}
