/**
 * Attack sessions, built from the events themselves: any event whose data has a `session`
 * field (Cowrie's, whatever the shape it arrived in) belongs to the session of that id within
 * its source (node, pot). See the `sessions` table in schema.ts for the storage.
 *
 * This is the SQLite writer side, run inside the event writer's batch transaction: it writes
 * what session-delta.ts finds a batch adds, by row id. The reader side is session-queries.ts,
 * on the main thread's connection.
 */
import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "./index";
import { positional, slot } from "./positional";
import { eventSources, sessionRecordings, sessions } from "./schema";
import { SessionBatcher, SessionEntry } from "./session-delta";
import type { Kind } from "./session-fields";

/**
 * Sessions the writer finds in memory, the most recently active ones (least recently active
 * forgotten first). One that sends again after being forgotten starts a new row. Far more
 * than the sessions a honeynet has open at once (a cowrie takes 256 connections per port);
 * a larger map costs the writer more per event in cache misses (measured: 100,000 entries
 * ~0.6 µs more per event than 20,000 when every event is a new session).
 */
const KNOWN_SESSIONS = 20_000;

/**
 * New session rows per INSERT statement, with positional placeholders filled from one reused
 * array (the events' technique, see ROWS_PER_INSERT in event-writer.ts): in the bench's worst
 * case, every event a new session, this halved the writer's cost of a session row.
 */
const ROWS_PER_INSERT = 32;
const SESSION_COLUMNS = 17;

function sessionRows(rows: number) {
  const ph = (i: number) => sql`${slot(i)}`;
  return Array.from({ length: rows }, (_, r) => {
    const at = r * SESSION_COLUMNS;
    return {
      id: ph(at),
      sourceId: ph(at + 1),
      session: ph(at + 2),
      srcIp: ph(at + 3),
      startTs: ph(at + 4),
      endTs: ph(at + 5),
      firstEventId: ph(at + 6),
      lastEventId: ph(at + 7),
      events: ph(at + 8),
      loginSuccess: ph(at + 9),
      username: ph(at + 10),
      password: ph(at + 11),
      commands: ph(at + 12),
      files: ph(at + 13),
      ttylog: ph(at + 14),
      closed: ph(at + 15),
      segs: ph(at + 16),
    };
  });
}

export class SessionTracker {
  private batcher = new SessionBatcher();
  /** A batch was written and not (yet) committed. */
  private uncommitted = false;
  private readonly insertMany;
  private readonly insertOne;
  private readonly update;
  private readonly updateEvents;
  private readonly updateEventsValues: unknown[] = new Array(7);
  private readonly rowValues: unknown[] = new Array(ROWS_PER_INSERT * SESSION_COLUMNS);
  private readonly updateValues: unknown[] = new Array(14);

  constructor(private readonly db: Db) {
    this.insertMany = positional(db, db.insert(sessions).values(sessionRows(ROWS_PER_INSERT)));
    this.insertOne = positional(db, db.insert(sessions).values(sessionRows(1)));
    const ph = slot;
    // What every batch adds to a known session: placeholders 0-4.
    const addEvents = {
      srcIp: sql`coalesce(${sessions.srcIp}, ${ph(0)})`,
      startTs: sql`min(${sessions.startTs}, ${ph(1)})`,
      endTs: sql`max(${sessions.endTs}, ${ph(2)})`,
      lastEventId: sql`${ph(3)}`,
      events: sql`${sessions.events} + ${ph(4)}`,
    };
    this.update = positional(
      db,
      db
        .update(sessions)
        .set({
          ...addEvents,
          // The first successful login's credentials: set only while there was none.
          username: sql`case when ${sessions.loginSuccess} = 1 then ${sessions.username} else ${ph(5)} end`,
          password: sql`case when ${sessions.loginSuccess} = 1 then ${sessions.password} else ${ph(6)} end`,
          loginSuccess: sql`max(${sessions.loginSuccess}, ${ph(7)})`,
          commands: sql`${sessions.commands} + ${ph(8)}`,
          files: sql`${sessions.files} + ${ph(9)}`,
          ttylog: sql`max(${sessions.ttylog}, ${ph(10)})`,
          closed: sql`max(${sessions.closed}, ${ph(11)})`,
          segs: sql`${sessions.segs} || ${ph(12)}`,
        })
        .where(eq(sessions.id, ph(13))),
    );
    // The same update for a batch that adds only events: it leaves the login, commands, files,
    // ttylog and closed columns alone, and SQLite then skips the partial indexes on them
    // (measured: ~2.0 µs per update instead of ~3.1).
    this.updateEvents = positional(
      db,
      db
        .update(sessions)
        .set({
          ...addEvents,
          segs: sql`${sessions.segs} || ${ph(5)}`,
        })
        .where(eq(sessions.id, ph(6))),
    );
    this.load();
  }

  /** The most recent sessions, from the table (at start, and after a batch was rolled back). */
  private load(): void {
    const b = (this.batcher = new SessionBatcher());
    b.nextId = (this.db.select({ max: sql<number | null>`max(${sessions.id})` }).from(sessions).get()?.max ?? 0) + 1;
    const recent = this.db
      .select({ id: sessions.id, sourceId: sessions.sourceId, session: sessions.session, segs: sessions.segs, login: sessions.loginSuccess })
      .from(sessions)
      .orderBy(desc(sessions.id))
      .limit(KNOWN_SESSIONS)
      .all();
    for (let i = recent.length - 1; i >= 0; i--) {
      const r = recent[i]!;
      const e = new SessionEntry(r.id, false, r.sourceId, r.session);
      e.lastSeg = Number(r.segs.slice(r.segs.lastIndexOf(",") + 1));
      e.login = r.login === 1;
      b.remember(e);
    }
  }

  /**
   * Writes the sessions of a batch, inside its transaction: one insert or update per distinct
   * session. The entries in memory change as the batch is read: the writer calls `committed`
   * after the commit, and a write that finds the last one not committed (its transaction
   * rolled back) reloads them from the table first.
   */
  write(n: number, firstId: number, bytes: Buffer, ends: Int32Array, ts: Float64Array, sourceIds: Int32Array, typeIds: Int32Array, ips: string[], kinds: Kind[]): void {
    if (this.uncommitted) this.load();
    this.uncommitted = true;
    this.store(this.batcher.read(n, firstId, bytes, ends, ts, sourceIds, typeIds, ips, kinds));
    this.batcher.forget(KNOWN_SESSIONS);
  }

  /** The batch whose sessions were written last is committed. */
  committed(): void {
    this.uncommitted = false;
  }

  private store(touched: SessionEntry[]): void {
    const v = this.rowValues;
    let rows = 0;
    const u = this.updateValues;
    for (const e of touched) {
      const login = e.newLogin ? 1 : 0;
      if (e.fresh) {
        const at = rows * SESSION_COLUMNS;
        v[at] = e.id;
        v[at + 1] = e.sourceId;
        v[at + 2] = e.session;
        v[at + 3] = e.srcIp;
        v[at + 4] = e.startTs;
        v[at + 5] = e.endTs;
        v[at + 6] = e.firstEventId;
        v[at + 7] = e.lastEventId;
        v[at + 8] = e.events;
        v[at + 9] = login;
        v[at + 10] = e.username;
        v[at + 11] = e.password;
        v[at + 12] = e.commands;
        v[at + 13] = e.files;
        v[at + 14] = e.ttylog;
        v[at + 15] = e.closed;
        v[at + 16] = e.segs;
        if (++rows === ROWS_PER_INSERT) {
          this.insertMany(v);
          rows = 0;
        }
        e.fresh = false;
      } else if (!e.newLogin && e.commands === 0 && e.files === 0 && e.ttylog === 0 && e.closed === 0) {
        const w = this.updateEventsValues;
        addedValues(w, e);
        w[5] = e.segs;
        w[6] = e.id;
        this.updateEvents(w);
      } else {
        addedValues(u, e);
        u[5] = e.username;
        u[6] = e.password;
        u[7] = login;
        u[8] = e.commands;
        u[9] = e.files;
        u[10] = e.ttylog;
        u[11] = e.closed;
        u[12] = e.segs;
        u[13] = e.id;
        this.update(u);
      }
      if (e.newLogin) e.login = true;
    }
    // The rest of the new rows one by one.
    const one = new Array(SESSION_COLUMNS);
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < SESSION_COLUMNS; c++) one[c] = v[r * SESSION_COLUMNS + c];
      this.insertOne(one);
    }
  }

  /** Deletes up to `maxRows` sessions that ended before the cutoff, and their recordings; returns how many. */
  retentionStep(cutoffMs: number, maxRows: number): number {
    const old = this.db
      .select({ id: sessions.id, sourceId: sessions.sourceId, session: sessions.session, nodeId: eventSources.nodeId, potId: eventSources.potId })
      .from(sessions)
      .leftJoin(eventSources, eq(eventSources.id, sessions.sourceId))
      .where(lt(sessions.endTs, cutoffMs))
      .orderBy(asc(sessions.id))
      .limit(maxRows)
      .all();
    if (old.length === 0) return 0;
    for (const s of old) {
      // A session deleted here that sends again starts a new row.
      this.batcher.unlink(s.session, s.id);
      if (s.nodeId === null || s.potId === null) continue;
      this.db
        .delete(sessionRecordings)
        .where(and(eq(sessionRecordings.nodeId, s.nodeId), eq(sessionRecordings.potId, s.potId), eq(sessionRecordings.session, s.session)))
        .run();
    }
    this.db.delete(sessions).where(inArray(sessions.id, old.map((s) => s.id))).run();
    return old.length;
  }
}

/** The values of the `addEvents` placeholders (0-4) of both updates. */
function addedValues(v: unknown[], e: SessionEntry): void {
  v[0] = e.srcIp;
  v[1] = e.startTs;
  v[2] = e.endTs;
  v[3] = e.lastEventId;
  v[4] = e.events;
}
