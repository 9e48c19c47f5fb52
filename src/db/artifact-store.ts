/**
 * Artifacts (files attackers left) and their sightings on SQLite: rows in the database, the
 * bytes as files named by SHA-256 in the artifacts folder (mode 0600, never executed), where
 * the operator can also reach them with a shell (docs/artifacts.md).
 */
import { chmodSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { and, desc, eq, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import type { Db } from "./index";
import { artifactSightings, artifacts, eventSources, sessions } from "./schema";
import type { MaybePromise } from "./stores";

/** Session ids per query of sessionsOf (well under SQLite's and PostgreSQL's bound parameters). */
export const SESSIONS_PER_QUERY = 500;

export interface Sighting {
  /** Already prefixed with the node id. */
  id: string;
  sha256: string;
  node_id: bigint;
  pot_id: string | null;
  source: string | null;
  session: string | null;
  url: string | null;
  filename: string | null;
  truncated: boolean;
  seen_at: number;
}

export interface ArtifactRow {
  sha256: string;
  size: number;
  mime: string | null;
  ext: string | null;
  stored: boolean;
  first_seen: number;
  last_seen: number;
}

/** A sighting's session as Core stored it: its id in the sessions table and its address. */
export interface SightingSession {
  node_id: string;
  pot_id: string | null;
  session: string;
  id: number;
  src_ip: string | null;
}

export interface ArtifactQuery {
  limit: number;
  cursor?: { lastSeen: number; sha256: string };
  session?: string;
  node_id?: bigint;
}

/** What artifacts need from storage, rows and bytes, on every backend (PostgreSQL: ./pg/artifact-store.ts). */
export interface ArtifactStorage {
  /** Records a sighting (once per id) and the artifact it is of; true when the sighting is new. */
  sighted(s: Sighting, size: number): MaybePromise<boolean>;
  get(sha256: string): MaybePromise<ArtifactRow | null>;
  /** Newest last sighting first; `next` is `<last_seen>:<sha256>` of the page's last row. */
  list(q: ArtifactQuery): MaybePromise<{ rows: ArtifactRow[]; next: string | null }>;
  sightings(sha256s: string[]): MaybePromise<Map<string, Sighting[]>>;
  /**
   * The stored sessions of these honeypot session ids that had files (every session an artifact
   * was seen in has one), with the node and pot each is of: one row per session.
   */
  sessionsOf(sessionIds: string[]): MaybePromise<SightingSession[]>;
  /** Takes the verified file at `path` (gone from there after) as the artifact's bytes, and marks it stored. */
  keep(sha256: string, path: string, type: { mime: string; ext: string } | null): MaybePromise<void>;
  /** A stored artifact's bytes as they are read; null when they are missing. */
  open(sha256: string): MaybePromise<ReadableStream<Uint8Array> | null>;
  /** Artifacts not seen since `cutoffMs`, with their sightings and bytes, deleted; returns their hashes. */
  expire(cutoffMs: number): MaybePromise<string[]>;
}

export class ArtifactStore implements ArtifactStorage {
  constructor(
    private readonly db: Db,
    /** The folder of the bytes, one file per SHA-256. */
    private readonly dir: string,
  ) {}

  keep(sha256: string, path: string, type: { mime: string; ext: string } | null): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(path, 0o600);
    renameSync(path, join(this.dir, sha256));
    this.markStored(sha256, type);
  }

  open(sha256: string): ReadableStream<Uint8Array> | null {
    const path = join(this.dir, sha256);
    try {
      statSync(path);
    } catch {
      return null;
    }
    return Bun.file(path).stream();
  }

  /** Records a sighting (once per id) and the artifact it is of; true when the sighting is new. */
  sighted(s: Sighting, size: number): boolean {
    return this.db.transaction((tx) => {
      const added = tx
        .insert(artifactSightings)
        .values({ id: s.id, sha256: s.sha256, nodeId: s.node_id.toString(), potId: s.pot_id, source: s.source, session: s.session, url: s.url, filename: s.filename, truncated: s.truncated ? 1 : 0, seenAt: s.seen_at })
        .onConflictDoNothing()
        .returning({ id: artifactSightings.id })
        .all();
      const row = tx.select().from(artifacts).where(eq(artifacts.sha256, s.sha256)).get();
      if (!row) tx.insert(artifacts).values({ sha256: s.sha256, size, mime: null, ext: null, stored: 0, firstSeen: s.seen_at, lastSeen: s.seen_at }).run();
      else if (added.length > 0) {
        tx.update(artifacts)
          .set({ firstSeen: Math.min(row.firstSeen, s.seen_at), lastSeen: Math.max(row.lastSeen, s.seen_at) })
          .where(eq(artifacts.sha256, s.sha256))
          .run();
      }
      return added.length > 0;
    });
  }

  markStored(sha256: string, type: { mime: string; ext: string } | null): void {
    this.db
      .update(artifacts)
      .set({ stored: 1, mime: type?.mime ?? null, ext: type?.ext ?? null })
      .where(eq(artifacts.sha256, sha256))
      .run();
  }

  get(sha256: string): ArtifactRow | null {
    const r = this.db.select().from(artifacts).where(eq(artifacts.sha256, sha256)).get();
    return r ? toRow(r) : null;
  }

  /** Newest last sighting first; the cursor is `<last_seen>:<sha256>` of the previous page's last row. */
  list(q: ArtifactQuery): { rows: ArtifactRow[]; next: string | null } {
    const where: SQL[] = [];
    if (q.cursor) {
      const c = q.cursor;
      where.push(or(lt(artifacts.lastSeen, c.lastSeen), and(eq(artifacts.lastSeen, c.lastSeen), lt(artifacts.sha256, c.sha256))) as SQL);
    }
    if (q.session !== undefined || q.node_id !== undefined) {
      const conds: SQL[] = [];
      if (q.session !== undefined) conds.push(eq(artifactSightings.session, q.session));
      if (q.node_id !== undefined) conds.push(eq(artifactSightings.nodeId, q.node_id.toString()));
      const shas = this.db.selectDistinct({ sha256: artifactSightings.sha256 }).from(artifactSightings).where(and(...conds)).all().map((r) => r.sha256);
      where.push(inArray(artifacts.sha256, shas));
    }
    const rows = this.db
      .select()
      .from(artifacts)
      .where(where.length ? and(...where) : undefined)
      .orderBy(desc(artifacts.lastSeen), desc(artifacts.sha256))
      .limit(q.limit + 1)
      .all()
      .map(toRow);
    const more = rows.length > q.limit;
    if (more) rows.pop();
    const last = rows.at(-1);
    return { rows, next: more && last ? `${last.last_seen}:${last.sha256}` : null };
  }

  sightings(sha256s: string[]): Map<string, Sighting[]> {
    const out = new Map<string, Sighting[]>();
    if (sha256s.length === 0) return out;
    const rows = this.db.select().from(artifactSightings).where(inArray(artifactSightings.sha256, sha256s)).orderBy(artifactSightings.seenAt).all();
    for (const r of rows) {
      const list = out.get(r.sha256) ?? [];
      list.push({
        id: r.id,
        sha256: r.sha256,
        node_id: BigInt(r.nodeId),
        pot_id: r.potId,
        source: r.source,
        session: r.session,
        url: r.url,
        filename: r.filename,
        truncated: r.truncated === 1,
        seen_at: r.seenAt,
      });
      out.set(r.sha256, list);
    }
    return out;
  }

  sessionsOf(sessionIds: string[]): SightingSession[] {
    const out: SightingSession[] = [];
    for (let i = 0; i < sessionIds.length; i += SESSIONS_PER_QUERY) {
      const ids = sessionIds.slice(i, i + SESSIONS_PER_QUERY);
      // `files > 0` as the partial index sessions_files says it: SQLite reads that index (the
      // sessions that had files), not every session.
      const rows = this.db
        .select({ id: sessions.id, session: sessions.session, src_ip: sessions.srcIp, node_id: eventSources.nodeId, pot_id: eventSources.potId })
        .from(sessions)
        .innerJoin(eventSources, eq(eventSources.id, sessions.sourceId))
        .where(and(sql`${sessions.files} > 0`, inArray(sessions.session, ids)))
        .all();
      for (const r of rows) if (r.node_id !== null) out.push({ ...r, node_id: r.node_id });
    }
    return out;
  }

  expire(cutoffMs: number): string[] {
    const gone = this.db.transaction((tx) => {
      const old = tx.select({ sha256: artifacts.sha256 }).from(artifacts).where(lt(artifacts.lastSeen, cutoffMs)).all().map((r) => r.sha256);
      if (old.length === 0) return old;
      tx.delete(artifactSightings).where(inArray(artifactSightings.sha256, old)).run();
      tx.delete(artifacts).where(inArray(artifacts.sha256, old)).run();
      return old;
    });
    for (const sha of gone) rmSync(join(this.dir, sha), { force: true });
    return gone;
  }
}

function toRow(r: typeof artifacts.$inferSelect): ArtifactRow {
  return { sha256: r.sha256, size: r.size, mime: r.mime, ext: r.ext, stored: r.stored === 1, first_seen: r.firstSeen, last_seen: r.lastSeen };
}
