/**
 * Artifacts on PostgreSQL: the rows as on SQLite, and the bytes in artifact_chunks, so that
 * every instance of a cluster serves a download whichever instance took the file (docs/scale-out.md
 * says why PostgreSQL rather than JetStream's object store). The chunks are written in the
 * transaction that marks the artifact stored, so a reader never sees a stored artifact with
 * half its bytes; a download reads them one chunk at a time.
 */
import { and, desc, eq, inArray, lt, or, sql, type SQL } from "drizzle-orm";
import { type ArtifactQuery, type ArtifactRow, type ArtifactStorage, SESSIONS_PER_QUERY, type Sighting, type SightingSession } from "../artifact-store";
import type { PgDb } from "./index";
import { artifactChunks, artifactSightings, artifacts, eventSources, sessions } from "./schema";

/**
 * Bytes per chunk row: large enough that a 64 MiB artifact is 256 rows, small enough that a
 * download holds little and no row nears TOAST's 1 GB limit (figures: docs/scale-out.md).
 */
export const ARTIFACT_CHUNK_BYTES = 256 * 1024;

/** Chunks a download reads ahead of the zip (1 MiB). */
const READ_AHEAD_CHUNKS = 4;

export class PgArtifactStore implements ArtifactStorage {
  constructor(private readonly db: PgDb) {}

  async sighted(s: Sighting, size: number): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const added = await tx
        .insert(artifactSightings)
        .values({ id: s.id, sha256: s.sha256, nodeId: s.node_id.toString(), potId: s.pot_id, source: s.source, session: s.session, url: s.url, filename: s.filename, truncated: s.truncated ? 1 : 0, seenAt: s.seen_at })
        .onConflictDoNothing()
        .returning({ id: artifactSightings.id });
      const row = { sha256: s.sha256, size, mime: null, ext: null, stored: 0, firstSeen: s.seen_at, lastSeen: s.seen_at };
      // An upsert, not a read then a write: two instances may record sightings of one file at once.
      if (added.length > 0) {
        await tx
          .insert(artifacts)
          .values(row)
          .onConflictDoUpdate({ target: artifacts.sha256, set: { firstSeen: sql`least(${artifacts.firstSeen}, excluded.first_seen)`, lastSeen: sql`greatest(${artifacts.lastSeen}, excluded.last_seen)` } });
      } else await tx.insert(artifacts).values(row).onConflictDoNothing();
      return added.length > 0;
    });
  }

  async get(sha256: string): Promise<ArtifactRow | null> {
    const [r] = await this.db.select().from(artifacts).where(eq(artifacts.sha256, sha256));
    return r ? toRow(r) : null;
  }

  async list(q: ArtifactQuery): Promise<{ rows: ArtifactRow[]; next: string | null }> {
    const where: SQL[] = [];
    if (q.cursor) {
      const c = q.cursor;
      where.push(or(lt(artifacts.lastSeen, c.lastSeen), and(eq(artifacts.lastSeen, c.lastSeen), lt(artifacts.sha256, c.sha256))) as SQL);
    }
    if (q.session !== undefined || q.node_id !== undefined) {
      const conds: SQL[] = [];
      if (q.session !== undefined) conds.push(eq(artifactSightings.session, q.session));
      if (q.node_id !== undefined) conds.push(eq(artifactSightings.nodeId, q.node_id.toString()));
      where.push(inArray(artifacts.sha256, this.db.selectDistinct({ sha256: artifactSightings.sha256 }).from(artifactSightings).where(and(...conds))));
    }
    const rows = (
      await this.db
        .select()
        .from(artifacts)
        .where(where.length ? and(...where) : undefined)
        .orderBy(desc(artifacts.lastSeen), desc(artifacts.sha256))
        .limit(q.limit + 1)
    ).map(toRow);
    const more = rows.length > q.limit;
    if (more) rows.pop();
    const last = rows.at(-1);
    return { rows, next: more && last ? `${last.last_seen}:${last.sha256}` : null };
  }

  async sightings(sha256s: string[]): Promise<Map<string, Sighting[]>> {
    const out = new Map<string, Sighting[]>();
    if (sha256s.length === 0) return out;
    const rows = await this.db.select().from(artifactSightings).where(inArray(artifactSightings.sha256, sha256s)).orderBy(artifactSightings.seenAt, artifactSightings.id);
    for (const r of rows) {
      const list = out.get(r.sha256) ?? [];
      list.push({ id: r.id, sha256: r.sha256, node_id: BigInt(r.nodeId), pot_id: r.potId, source: r.source, session: r.session, url: r.url, filename: r.filename, truncated: r.truncated === 1, seen_at: r.seenAt });
      out.set(r.sha256, list);
    }
    return out;
  }

  async sessionsOf(sessionIds: string[]): Promise<SightingSession[]> {
    const out: SightingSession[] = [];
    for (let i = 0; i < sessionIds.length; i += SESSIONS_PER_QUERY) {
      const ids = sessionIds.slice(i, i + SESSIONS_PER_QUERY);
      const rows = await this.db
        .select({ id: sessions.id, session: sessions.session, src_ip: sessions.srcIp, node_id: eventSources.nodeId, pot_id: eventSources.potId })
        .from(sessions)
        .innerJoin(eventSources, eq(eventSources.id, sessions.sourceId))
        .where(and(sql`${sessions.files} > 0`, inArray(sessions.session, ids)));
      for (const r of rows) if (r.node_id !== null) out.push({ ...r, node_id: r.node_id });
    }
    return out;
  }

  async keep(sha256: string, path: string, type: { mime: string; ext: string } | null): Promise<void> {
    const file = Bun.file(path);
    const size = file.size;
    await this.db.$client.begin(async (tx) => {
      // Read a chunk at a time: a 64 MiB artifact is never whole in memory.
      for (let seq = 0, at = 0; at < size; seq++, at += ARTIFACT_CHUNK_BYTES) {
        const data = await file.slice(at, Math.min(at + ARTIFACT_CHUNK_BYTES, size)).bytes();
        // The same hash is the same bytes: another instance that stored them first wins.
        await tx`insert into artifact_chunks (sha256, seq, data) values (${sha256}, ${seq}, ${data}) on conflict do nothing`;
      }
      await tx`update artifacts set stored = 1, mime = ${type?.mime ?? null}, ext = ${type?.ext ?? null} where sha256 = ${sha256}`;
    });
    await file.delete();
  }

  async open(sha256: string): Promise<ReadableStream<Uint8Array> | null> {
    const client = this.db.$client;
    const [r] = await client`select a.size::bigint as size, (select count(*) from artifact_chunks c where c.sha256 = a.sha256)::int as chunks from artifacts a where a.sha256 = ${sha256} and a.stored = 1`;
    if (!r || r.chunks !== Math.ceil(Number(r.size) / ARTIFACT_CHUNK_BYTES)) return null;
    const chunks = r.chunks as number;
    let seq = 0;
    // Read ahead while the zip compresses: a round trip per chunk no longer waits on it.
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (seq >= chunks) return controller.close();
          const [c] = await client`select data from artifact_chunks where sha256 = ${sha256} and seq = ${seq}`;
          // Deleted since (retention): the download ends in an error rather than short.
          if (!c) return controller.error(new Error(`artifact ${sha256} was deleted while it was read`));
          seq++;
          controller.enqueue(new Uint8Array(c.data));
        },
      },
      { highWaterMark: READ_AHEAD_CHUNKS },
    );
  }

  async expire(cutoffMs: number): Promise<string[]> {
    return this.db.transaction(async (tx) => {
      const gone = (await tx.delete(artifacts).where(lt(artifacts.lastSeen, cutoffMs)).returning({ sha256: artifacts.sha256 })).map((r) => r.sha256);
      if (gone.length === 0) return gone;
      await tx.delete(artifactSightings).where(inArray(artifactSightings.sha256, gone));
      await tx.delete(artifactChunks).where(inArray(artifactChunks.sha256, gone));
      return gone;
    });
  }
}

function toRow(r: typeof artifacts.$inferSelect): ArtifactRow {
  return { sha256: r.sha256, size: r.size, mime: r.mime, ext: r.ext, stored: r.stored === 1, first_seen: r.firstSeen, last_seen: r.lastSeen };
}
