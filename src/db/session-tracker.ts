/**
 * Attack sessions, built from the events themselves: any event whose data has a `session`
 * field (Cowrie's, whatever the shape it arrived in) belongs to the session of that id within
 * its source (node, pot). See the `sessions` table in schema.ts for the storage.
 *
 * This is the writer side, run inside the event writer's batch transaction; the reader side
 * is session-queries.ts, on the main thread's connection.
 */
import { and, asc, desc, eq, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "./index";
import { SEG_SIZE } from "./event-store";
import { eventSources, sessionRecordings, sessions } from "./schema";

/** What an event type adds to its session's summary. */
const Kind = { Other: 0, LoginSuccess: 1, Command: 2, File: 3, TtyLog: 4, Closed: 5 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

const KINDS: Record<string, Kind> = {
  "cowrie.login.success": Kind.LoginSuccess,
  "cowrie.command.input": Kind.Command,
  "cowrie.session.file_download": Kind.File,
  "cowrie.session.file_upload": Kind.File,
  "cowrie.log.closed": Kind.TtyLog,
  "cowrie.session.closed": Kind.Closed,
};

export function kindOfType(name: string): Kind {
  return KINDS[name] ?? Kind.Other;
}

/**
 * Session ids are looked for as text (`"session": "<id>"`, with or without spaces, as the
 * honeypot wrote it) rather than parsed out of each event: a string search per event on the
 * writer's thread. Inside a JSON string a quote is always escaped, so `"session"` followed by
 * a colon is a key. Ids outside this alphabet (Cowrie's are 8 or 12 hex digits) are not sessions.
 */
const SESSION_KEY = '"session"';
const SESSION_ID = /^[\w.:-]{1,64}$/;

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

export function sessionOf(data: string): string | null {
  for (let at = data.indexOf(SESSION_KEY); at >= 0; at = data.indexOf(SESSION_KEY, at + 1)) {
    let i = at + SESSION_KEY.length;
    while (isSpace(data.charCodeAt(i))) i++;
    if (data.charCodeAt(i) !== 58) continue; // a value "session", not the key
    i++;
    while (isSpace(data.charCodeAt(i))) i++;
    if (data.charCodeAt(i) !== 34) return null;
    const to = data.indexOf('"', i + 1);
    if (to < 0 || to - i - 1 > 64) return null;
    const id = data.slice(i + 1, to);
    return SESSION_ID.test(id) ? id : null;
  }
  return null;
}

/** Recent sessions the writer finds in memory; older ones that send again start a new row. */
const KNOWN_SESSIONS = 100_000;

interface Known {
  id: number;
  lastSeg: number;
  login: boolean;
}

interface Delta {
  key: string;
  known: Known | null;
  sourceId: number;
  session: string;
  srcIp: string | null;
  startTs: number;
  endTs: number;
  firstEventId: number;
  lastEventId: number;
  events: number;
  login: boolean;
  username: string | null;
  password: string | null;
  commands: number;
  files: number;
  ttylog: boolean;
  closed: boolean;
  /** Segments of this batch's events, ascending, without the one the row already ends with. */
  segs: number[];
}

/** What a committed batch changes in the tracker's memory. */
export type SessionChanges = { key: string; known: Known }[];

export class SessionTracker {
  private readonly known = new Map<string, Known>();
  private nextId: number;
  private readonly insert;
  private readonly update;

  constructor(private readonly db: Db) {
    const ph = sql.placeholder;
    this.insert = db
      .insert(sessions)
      .values({
        id: ph("id"),
        sourceId: ph("sourceId"),
        session: ph("session"),
        srcIp: ph("srcIp"),
        startTs: ph("startTs"),
        endTs: ph("endTs"),
        firstEventId: ph("firstEventId"),
        lastEventId: ph("lastEventId"),
        events: ph("events"),
        loginSuccess: ph("login"),
        username: ph("username"),
        password: ph("password"),
        commands: ph("commands"),
        files: ph("files"),
        ttylog: ph("ttylog"),
        closed: ph("closed"),
        segs: ph("segs"),
      })
      .prepare();
    this.update = db
      .update(sessions)
      .set({
        srcIp: sql`coalesce(${sessions.srcIp}, ${ph("srcIp")})`,
        startTs: sql`min(${sessions.startTs}, ${ph("startTs")})`,
        endTs: sql`max(${sessions.endTs}, ${ph("endTs")})`,
        lastEventId: sql`${ph("lastEventId")}`,
        events: sql`${sessions.events} + ${ph("events")}`,
        // The first successful login's credentials: set only while there was none.
        username: sql`case when ${sessions.loginSuccess} = 1 then ${sessions.username} else ${ph("username")} end`,
        password: sql`case when ${sessions.loginSuccess} = 1 then ${sessions.password} else ${ph("password")} end`,
        loginSuccess: sql`max(${sessions.loginSuccess}, ${ph("login")})`,
        commands: sql`${sessions.commands} + ${ph("commands")}`,
        files: sql`${sessions.files} + ${ph("files")}`,
        ttylog: sql`max(${sessions.ttylog}, ${ph("ttylog")})`,
        closed: sql`max(${sessions.closed}, ${ph("closed")})`,
        segs: sql`${sessions.segs} || ${ph("segsTail")}`,
      })
      .where(eq(sessions.id, ph("id")))
      .prepare();
    this.nextId = (db.select({ max: sql<number | null>`max(${sessions.id})` }).from(sessions).get()?.max ?? 0) + 1;
    const recent = db
      .select({ id: sessions.id, sourceId: sessions.sourceId, session: sessions.session, segs: sessions.segs, login: sessions.loginSuccess })
      .from(sessions)
      .orderBy(desc(sessions.id))
      .limit(KNOWN_SESSIONS)
      .all();
    for (let i = recent.length - 1; i >= 0; i--) {
      const r = recent[i]!;
      this.known.set(keyOf(r.sourceId, r.session), { id: r.id, lastSeg: Number(r.segs.slice(r.segs.lastIndexOf(",") + 1)), login: r.login === 1 });
    }
  }

  /**
   * Writes the sessions of a batch (inside its transaction). The tracker's memory changes
   * only through `committed`, so a rolled-back batch leaves it as it was.
   */
  write(
    n: number,
    firstId: number,
    data: string[],
    ts: Float64Array,
    sourceIds: Int32Array,
    typeIds: Int32Array,
    ips: string[],
    kindOf: (typeId: number) => Kind,
  ): SessionChanges {
    const deltas = new Map<string, Delta>();
    for (let i = 0; i < n; i++) {
      const text = data[i]!;
      const session = sessionOf(text);
      if (session === null) continue;
      const sourceId = sourceIds[i]!;
      const key = keyOf(sourceId, session);
      const id = firstId + i;
      const t = ts[i]!;
      const seg = Math.floor(id / SEG_SIZE);
      let d = deltas.get(key);
      if (!d) {
        const known = this.known.get(key) ?? null;
        d = { key, known, sourceId, session, srcIp: ips[i] || null, startTs: t, endTs: t, firstEventId: id, lastEventId: id, events: 0, login: false, username: null, password: null, commands: 0, files: 0, ttylog: false, closed: false, segs: [] };
        deltas.set(key, d);
        if (!known || known.lastSeg !== seg) d.segs.push(seg);
      } else if (d.segs.length === 0 ? d.known!.lastSeg !== seg : d.segs[d.segs.length - 1] !== seg) d.segs.push(seg);
      d.srcIp ??= ips[i] || null;
      if (t < d.startTs) d.startTs = t;
      if (t > d.endTs) d.endTs = t;
      d.lastEventId = id;
      d.events++;
      switch (kindOf(typeIds[i]!)) {
        case Kind.LoginSuccess:
          if (!d.login && !d.known?.login) {
            const creds = credentials(text);
            d.username = creds.username;
            d.password = creds.password;
          }
          d.login = true;
          break;
        case Kind.Command:
          d.commands++;
          break;
        case Kind.File:
          d.files++;
          break;
        case Kind.TtyLog:
          d.ttylog = true;
          break;
        case Kind.Closed:
          d.closed = true;
          break;
      }
    }
    const changes: SessionChanges = [];
    let nextId = this.nextId;
    for (const d of deltas.values()) {
      const values = {
        srcIp: d.srcIp,
        startTs: d.startTs,
        endTs: d.endTs,
        lastEventId: d.lastEventId,
        events: d.events,
        login: d.login ? 1 : 0,
        username: d.username,
        password: d.password,
        commands: d.commands,
        files: d.files,
        ttylog: d.ttylog ? 1 : 0,
        closed: d.closed ? 1 : 0,
      };
      const lastSeg = d.segs.length > 0 ? d.segs[d.segs.length - 1]! : d.known!.lastSeg;
      if (d.known) {
        this.update.run({ ...values, id: d.known.id, segsTail: d.segs.map((s) => `,${s}`).join("") });
        changes.push({ key: d.key, known: { id: d.known.id, lastSeg, login: d.known.login || d.login } });
      } else {
        const id = nextId++;
        this.insert.run({ ...values, id, sourceId: d.sourceId, session: d.session, firstEventId: d.firstEventId, segs: d.segs.join(",") });
        changes.push({ key: d.key, known: { id, lastSeg, login: d.login } });
      }
    }
    return changes;
  }

  committed(changes: SessionChanges): void {
    for (const { key, known } of changes) {
      if (known.id >= this.nextId) this.nextId = known.id + 1;
      // Most recently used last, so the oldest are forgotten first.
      this.known.delete(key);
      this.known.set(key, known);
    }
    for (const key of this.known.keys()) {
      if (this.known.size <= KNOWN_SESSIONS) break;
      this.known.delete(key);
    }
  }

  /** Deletes up to `maxRows` sessions that ended before the cutoff, and their recordings; returns how many. */
  retentionStep(cutoffMs: number, maxRows: number): number {
    const old = this.db
      .select({ id: sessions.id, session: sessions.session, nodeId: eventSources.nodeId, potId: eventSources.potId })
      .from(sessions)
      .leftJoin(eventSources, eq(eventSources.id, sessions.sourceId))
      .where(lt(sessions.endTs, cutoffMs))
      .orderBy(asc(sessions.id))
      .limit(maxRows)
      .all();
    if (old.length === 0) return 0;
    for (const s of old) {
      if (s.nodeId === null || s.potId === null) continue;
      this.db
        .delete(sessionRecordings)
        .where(and(eq(sessionRecordings.nodeId, s.nodeId), eq(sessionRecordings.potId, s.potId), eq(sessionRecordings.session, s.session)))
        .run();
    }
    this.db.delete(sessions).where(inArray(sessions.id, old.map((s) => s.id))).run();
    // A session deleted here that sends again starts a new row.
    this.known.clear();
    return old.length;
  }
}

function keyOf(sourceId: number, session: string): string {
  return `${sourceId}/${session}`;
}

function credentials(text: string): { username: string | null; password: string | null } {
  try {
    const o = JSON.parse(text) as Record<string, unknown>;
    return { username: typeof o.username === "string" ? o.username : null, password: typeof o.password === "string" ? o.password : null };
  } catch {
    return { username: null, password: null };
  }
}
