/**
 * Reading attack sessions (docs/sessions.md): the list with its filters, and one session's
 * events through the segments its row names. The rows are written by session-tracker.ts in the
 * event writer's transactions. Recordings: recording-store.ts.
 */
import { and, asc, desc, eq, gte, inArray, lt, lte, sql, type SQL } from "drizzle-orm";
import type { Db } from "./index";
import { type EventRow, eventRowColumns, toRow } from "./event-queries";
import { SEG_SIZE } from "./event-store";
import { MAX_SESSION_EVENTS } from "./read-limits";
import { sessionOf } from "./session-fields";
import { events, eventSources, eventTypes, sessions } from "./schema";
import type { MaybePromise } from "./stores";


export interface SessionFilter {
  nodeId?: bigint;
  potId?: string;
  potType?: string;
  srcIp?: string;
  /** Cowrie's session id. */
  session?: string;
  /** Sessions with an event at or after this time, ms. */
  since?: number;
  /** Sessions that started before this time, ms. */
  until?: number;
  hasCommands?: boolean;
  hasFiles?: boolean;
  loginSuccess?: boolean;
}

export interface SessionRow {
  id: number;
  session: string;
  source_id: number;
  node_id: bigint | null;
  pot_id: string | null;
  pot_type: string | null;
  src_ip: string | null;
  start_ts: number;
  end_ts: number;
  events: number;
  first_event_id: number;
  last_event_id: number;
  login_success: boolean;
  username: string | null;
  password: string | null;
  commands: number;
  files: number;
  ttylog: boolean;
  closed: boolean;
  segs: number[];
}

export interface SessionPage {
  sessions: SessionRow[];
  nextCursor: number | null;
}

/**
 * Session rows one page may scan without an index (a filter on the address or the time
 * alone) before it returns what it found with a cursor to go on from.
 */
export const MAX_SCAN = 200_000;
export { MAX_SESSION_EVENTS } from "./read-limits";

/**
 * The sessions REST and the console read (docs/sessions.md), on either backend: SQLite here,
 * PostgreSQL in pg/session-queries.ts. A session's events are read through the segments its
 * row names, within its first and last event ids, of its source.
 */
export interface SessionStorage {
  /** Newest first; `cursor` is the `nextCursor` of the previous page. */
  list(f: SessionFilter, limit: number, cursor: number | null): MaybePromise<SessionPage>;
  get(id: number): MaybePromise<SessionRow | null>;
  /** The session's events in order, at most MAX_SESSION_EVENTS. */
  events(s: SessionRow): MaybePromise<EventRow[]>;
}

export class SessionQueries implements SessionStorage {
  constructor(private readonly db: Db) {}

  list(f: SessionFilter, limit: number, cursor: number | null): SessionPage {
    const upper = cursor === null ? Number.MAX_SAFE_INTEGER : cursor - 1;
    if (upper < 1) return { sessions: [], nextCursor: null };
    const conds: SQL[] = [lte(sessions.id, upper)];
    const sourceConds: SQL[] = [];
    if (f.nodeId !== undefined) sourceConds.push(eq(eventSources.nodeId, f.nodeId.toString()));
    if (f.potId !== undefined) sourceConds.push(eq(eventSources.potId, f.potId));
    if (f.potType !== undefined) sourceConds.push(eq(eventSources.potType, f.potType));
    if (sourceConds.length > 0) {
      const ids = this.db.select({ id: eventSources.id }).from(eventSources).where(and(...sourceConds)).all().map((r) => r.id);
      if (ids.length === 0) return { sessions: [], nextCursor: null };
      conds.push(inArray(sessions.sourceId, ids));
    }
    if (f.srcIp !== undefined) conds.push(eq(sessions.srcIp, f.srcIp));
    if (f.session !== undefined) conds.push(eq(sessions.session, f.session));
    if (f.since !== undefined) conds.push(gte(sessions.endTs, f.since));
    if (f.until !== undefined) conds.push(lt(sessions.startTs, f.until));
    // Written as the partial indexes' conditions, so SQLite uses them.
    const indexed = f.loginSuccess === true || f.hasCommands === true || f.hasFiles === true;
    if (f.loginSuccess !== undefined) conds.push(f.loginSuccess ? sql`${sessions.loginSuccess} = 1` : sql`${sessions.loginSuccess} = 0`);
    if (f.hasCommands !== undefined) conds.push(f.hasCommands ? sql`${sessions.commands} > 0` : sql`${sessions.commands} = 0`);
    if (f.hasFiles !== undefined) conds.push(f.hasFiles ? sql`${sessions.files} > 0` : sql`${sessions.files} = 0`);
    // A filter without an index scans a bounded window of rows per page.
    let windowLower: number | null = null;
    if (!indexed && conds.length > 1) {
      const top = this.db.select({ max: sql<number | null>`max(${sessions.id})` }).from(sessions).get()?.max ?? 0;
      windowLower = Math.max(1, Math.min(upper, top) - MAX_SCAN + 1);
      conds.push(gte(sessions.id, windowLower));
    }
    const rows = this.select().where(and(...conds)).orderBy(desc(sessions.id)).limit(limit).all().map(toSession);
    if (rows.length === limit) return { sessions: rows, nextCursor: rows[rows.length - 1]!.id };
    return { sessions: rows, nextCursor: windowLower !== null && windowLower > 1 ? windowLower : null };
  }

  get(id: number): SessionRow | null {
    const r = this.select().where(eq(sessions.id, id)).get();
    return r ? toSession(r) : null;
  }

  /** The session's events in order (at most MAX_SESSION_EVENTS), read segment by segment. */
  events(s: SessionRow): EventRow[] {
    const ph = sql.placeholder;
    const query = this.db
      .select(eventRowColumns)
      .from(events)
      .leftJoin(eventSources, eq(eventSources.id, events.sourceId))
      .innerJoin(eventTypes, eq(eventTypes.id, events.typeId))
      .where(and(gte(events.id, ph("lo")), lte(events.id, ph("hi")), eq(events.sourceId, s.source_id), sql`instr(${events.data}, ${`"${s.session}"`}) > 0`))
      .orderBy(asc(events.id))
      .limit(ph("n"))
      .prepare();
    const out: EventRow[] = [];
    for (const seg of s.segs) {
      const lo = Math.max(seg * SEG_SIZE, s.first_event_id);
      const hi = Math.min(seg * SEG_SIZE + SEG_SIZE - 1, s.last_event_id);
      for (const r of query.all({ lo, hi, n: MAX_SESSION_EVENTS - out.length })) {
        // The same test as the writer's: the first `session` key of the data names the session.
        if (sessionOf(r.data) === s.session) out.push(toRow(r));
      }
      if (out.length >= MAX_SESSION_EVENTS) break;
    }
    return out;
  }

  private select() {
    return this.db
      .select({
        id: sessions.id,
        session: sessions.session,
        sourceId: sessions.sourceId,
        nodeId: eventSources.nodeId,
        potId: eventSources.potId,
        potType: eventSources.potType,
        srcIp: sessions.srcIp,
        startTs: sessions.startTs,
        endTs: sessions.endTs,
        events: sessions.events,
        firstEventId: sessions.firstEventId,
        lastEventId: sessions.lastEventId,
        loginSuccess: sessions.loginSuccess,
        username: sessions.username,
        password: sessions.password,
        commands: sessions.commands,
        files: sessions.files,
        ttylog: sessions.ttylog,
        closed: sessions.closed,
        segs: sessions.segs,
      })
      .from(sessions)
      .leftJoin(eventSources, eq(eventSources.id, sessions.sourceId))
      .$dynamic();
  }
}

interface Selected {
  id: number;
  session: string;
  sourceId: number;
  nodeId: string | null;
  potId: string | null;
  potType: string | null;
  srcIp: string | null;
  startTs: number;
  endTs: number;
  events: number;
  firstEventId: number;
  lastEventId: number;
  loginSuccess: number;
  username: string | null;
  password: string | null;
  commands: number;
  files: number;
  ttylog: number;
  closed: number;
  segs: string;
}

function toSession(r: Selected): SessionRow {
  return {
    id: r.id,
    session: r.session,
    source_id: r.sourceId,
    node_id: r.nodeId === null ? null : BigInt(r.nodeId),
    pot_id: r.potId,
    pot_type: r.potType,
    src_ip: r.srcIp,
    start_ts: r.startTs,
    end_ts: r.endTs,
    events: r.events,
    first_event_id: r.firstEventId,
    last_event_id: r.lastEventId,
    login_success: r.loginSuccess === 1,
    username: r.username,
    password: r.password,
    commands: r.commands,
    files: r.files,
    ttylog: r.ttylog === 1,
    closed: r.closed === 1,
    segs: r.segs === "" ? [] : r.segs.split(",").map(Number),
  };
}
