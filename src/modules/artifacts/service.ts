/**
 * Artifacts: files attackers left on honeypots (downloads, uploads), kept by SHA-256 in the
 * artifact storage (SQLite: files in Core's artifacts folder, mode 0600, never executed;
 * PostgreSQL: chunks every instance reads), described from their magic bytes, and handed out
 * only inside a zip encrypted with the password `infected` (docs/artifacts.md).
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileTypeFromBuffer } from "file-type";
import type { ArtifactRow, ArtifactStorage, Sighting, SightingSession } from "../../db/artifact-store";
import type { Artifact } from "./schemas";
import type { Logger } from "../../log";
import type { FileOffer } from "../../protocol/messages";
import { farOff } from "../../core/ingest/timestamp";
import type { FileSink } from "../../core/transfer/file-receiver";

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_EVERY_MS = 60 * 60 * 1000;
/** What file-type reads to recognise a file. */
const MAGIC_BYTES = 4100;

export interface ArtifactOptions {
  /** The folder whose `partial/` holds transfers under way (src/core/transfer/file-receiver.ts). */
  dir: string;
  maxBytes: number;
  retentionDays: number;
  store: ArtifactStorage;
  logger: Logger;
}

export class Artifacts implements FileSink {
  readonly maxBytes: number;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly opts: ArtifactOptions) {
    this.maxBytes = opts.maxBytes;
    mkdirSync(opts.dir, { recursive: true, mode: 0o700 });
  }

  /** Retention: once now, awaited (a Core that was down for days catches up before it serves), then every hour. */
  async start(): Promise<void> {
    const days = this.opts.retentionDays;
    if (days <= 0) return;
    await this.expire(Date.now() - days * DAY_MS);
    this.timer = setInterval(() => void this.expire(Date.now() - days * DAY_MS), RETENTION_EVERY_MS);
    this.timer.unref?.();
  }

  async offered(nodeId: bigint, offer: FileOffer): Promise<boolean> {
    const m = offer.meta ?? {};
    const text = (k: string) => (typeof m[k] === "string" && m[k] !== "" ? (m[k] as string) : null);
    const seen = typeof m.seen_at === "string" ? Date.parse(m.seen_at) : NaN;
    const now = Date.now();
    const sighting: Sighting = {
      id: `${nodeId}:${offer.sighting_id}`,
      sha256: offer.sha256,
      node_id: nodeId,
      pot_id: text("pot_id"),
      source: text("source"),
      session: text("session"),
      url: text("url"),
      filename: text("filename"),
      truncated: m.truncated === true,
      // A node's clock is trusted to the minute at most: a sighting is never dated in the future,
      // and one dated far off (before 2000, or so old that retention would delete it at once,
      // as for events) is dated when Core heard of it.
      seen_at: Number.isFinite(seen) && !farOff(seen, now, this.opts.retentionDays * DAY_MS) ? Math.min(seen, now) : now,
    };
    await this.opts.store.sighted(sighting, offer.size);
    return (await this.opts.store.get(offer.sha256))?.stored === true;
  }

  async complete(nodeId: bigint, offer: FileOffer, path: string): Promise<void> {
    const type = await magicType(path);
    await this.opts.store.keep(offer.sha256, path, type);
    this.opts.logger.info({ node_id: nodeId.toString(), sha256: offer.sha256, size: offer.size, mime: type?.mime ?? null }, "artifact stored");
  }

  /** Deletes artifacts (rows and bytes) not seen since `cutoffMs`. */
  async expire(cutoffMs: number): Promise<number> {
    try {
      // Transfers abandoned for as long (a node that never came back) give their space back too.
      // They are this instance's own files: cleared whatever the database answers.
      const partial = join(this.opts.dir, "partial");
      for (const name of existsSync(partial) ? readdirSync(partial) : []) {
        if ((statSync(join(partial, name), { throwIfNoEntry: false })?.mtimeMs ?? Infinity) < cutoffMs) rmSync(join(partial, name), { force: true });
      }
      // Every instance of a cluster runs this too: a delete finds nothing the second time.
      const gone = await this.opts.store.expire(cutoffMs);
      if (gone.length > 0) this.opts.logger.info({ deleted: gone.length, retention_days: this.opts.retentionDays }, "deleted artifacts not seen within the retention period");
      return gone.length;
    } catch (err) {
      this.opts.logger.warn({ err: (err as Error).message }, "deleting old artifacts failed; trying again later");
      return 0;
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get store(): ArtifactStorage {
    return this.opts.store;
  }

  /** Rows as REST shows them: with their sightings, each with its session in Core and its address. */
  async describe(rows: ArtifactRow[]): Promise<Artifact[]> {
    const sightings = await this.opts.store.sightings(rows.map((r) => r.sha256));
    const hashes = new Set<string>();
    for (const list of sightings.values()) for (const s of list) if (s.session !== null) hashes.add(s.session);
    const stored = new Map<string, SightingSession>();
    for (const s of await this.opts.store.sessionsOf([...hashes])) {
      const key = sessionKey(s.node_id, s.pot_id, s.session);
      // A honeypot that reused a session id: the sighting is of the newest such session.
      if ((stored.get(key)?.id ?? 0) < s.id) stored.set(key, s);
    }
    return rows.map((r) => {
      const list = (sightings.get(r.sha256) ?? []).map((s) => {
        const session = s.session === null ? undefined : stored.get(sessionKey(s.node_id.toString(), s.pot_id, s.session));
        return {
          node_id: s.node_id,
          pot_id: s.pot_id,
          source: s.source,
          session: s.session,
          session_id: session?.id ?? null,
          src_ip: session?.src_ip ?? null,
          url: s.url,
          filename: s.filename,
          truncated: s.truncated,
          seen_at: new Date(s.seen_at).toISOString(),
        };
      });
      const distinct = (pick: (s: (typeof list)[number]) => string | null) => [...new Set(list.map(pick).filter((v): v is string => v !== null))];
      return {
        sha256: r.sha256,
        size: r.size,
        mime: r.mime,
        ext: r.ext,
        stored: r.stored,
        first_seen: new Date(r.first_seen).toISOString(),
        last_seen: new Date(r.last_seen).toISOString(),
        sessions: distinct((s) => s.session),
        sources: distinct((s) => s.src_ip),
        urls: distinct((s) => s.url),
        filenames: distinct((s) => s.filename),
        sightings: list,
      };
    });
  }
}

const sessionKey = (nodeId: string, potId: string | null, session: string) => JSON.stringify([nodeId, potId, session]);

/** The media type from the magic bytes (file-type), or a text type for scripts and text. */
async function magicType(path: string): Promise<{ mime: string; ext: string } | null> {
  const buf = Buffer.alloc(MAGIC_BYTES);
  const fd = openSync(path, "r");
  let n: number;
  try {
    n = readSync(fd, buf, 0, MAGIC_BYTES, 0);
  } finally {
    closeSync(fd);
  }
  const head = buf.subarray(0, n);
  const found = await fileTypeFromBuffer(head);
  if (found) return { mime: found.mime, ext: found.ext };
  // Droppers are mostly shell scripts, which have no magic number file-type knows.
  if (n === 0 || head.includes(0)) return null;
  if (head.subarray(0, 2).toString() === "#!") return { mime: "text/x-shellscript", ext: "sh" };
  return { mime: "text/plain", ext: "txt" };
}
