/**
 * What a batch of events adds to attack sessions, worked out without a database: one entry per
 * (source, session id) the batch touches, with its address, times, event ids, counts, first
 * login's credentials, and the segments its events are in. Both backends write these deltas:
 * the SQLite writer (session-tracker.ts) by row id, the PostgreSQL writers (pg/session-part.ts)
 * by upserting on (source, session). See the `sessions` table in schema.ts.
 */
import { SEG_SIZE } from "./event-store";
import { credentials, Kind, nextSessionKey, SESSION_ID, sessionAt, sessionKey, sessionKeyAt, SessionScan, type SessionKey } from "./session-fields";

/**
 * A session the step knows: what the batch being read adds (valid while `batch` is that
 * batch), and what the backend stored of it before. Sessions of the same id from other
 * sources (node, pot) hang off `other`: the map is keyed by the id alone, the cheaper key.
 * One object per session for as long as it is known, refilled per batch: the SQLite writer's
 * worst case (every event a new session) measured the allocation of a delta per batch.
 */
export class SessionEntry {
  /** The last segment stored for the session (-1: none), so a batch adds only new ones. */
  lastSeg = -1;
  /** A successful login was stored: later ones keep its credentials. */
  login = false;
  batch = 0;
  other: SessionEntry | undefined = undefined;
  // What this batch adds:
  srcIp: string | null = null;
  startTs = 0;
  endTs = 0;
  firstEventId = 0;
  lastEventId = 0;
  events = 0;
  newLogin = false;
  username: string | null = null;
  password: string | null = null;
  commands = 0;
  files = 0;
  ttylog = 0;
  closed = 0;
  /**
   * The segments this batch adds, comma-separated; led by a comma when the session has
   * segments stored already (not `fresh`), so the backend appends it to what it holds.
   */
  segs = "";

  constructor(
    /** The row id the SQLite writer gives it (PostgreSQL numbers its rows itself). */
    readonly id: number,
    /** No row is known to exist yet: this batch inserts it. */
    public fresh: boolean,
    readonly sourceId: number,
    readonly session: string,
  ) {}
}

/**
 * Reads batches into session entries. `known` holds the sessions seen (the SQLite writer
 * keeps them across batches and trims it; the PostgreSQL part clears it per batch, since other
 * writers of a cluster add to the same rows).
 */
export class SessionBatcher {
  /** By the session id's key (see SessionKey), least recently active first. */
  known = new Map<SessionKey, SessionEntry>();
  /** The id the next new session gets. */
  nextId = 1;
  private batch = 0;
  private readonly scan = new SessionScan();

  /**
   * The sessions of a batch's events: `bytes[ends[i-1], ends[i])` is event i's data (UTF-8),
   * its id `firstId + i`; `kinds` by type id. Returns each session the batch touches once, in
   * the order first touched.
   */
  read(n: number, firstId: number, bytes: Buffer, ends: ArrayLike<number>, ts: ArrayLike<number>, sourceIds: ArrayLike<number>, typeIds: ArrayLike<number>, ips: string[], kinds: Kind[]): SessionEntry[] {
    const batch = ++this.batch;
    const touched: SessionEntry[] = [];
    // The segment as text, for new entries' `segs` (one segment per 4096 events).
    let segOf = -1;
    let segText = "";
    // Where the session key occurs next in the batch's bytes (-1: nowhere): one search finds
    // it for every event up to the next that has it.
    let next = -2;
    const scan = this.scan;
    for (let i = 0; i < n; i++) {
      const from = i === 0 ? 0 : ends[i - 1]!;
      const to = ends[i]!;
      if (next !== -1 && next < from) next = nextSessionKey(bytes, from);
      if (next === -1 || next >= to) continue;
      if (!scan.find(bytes, from, to, next)) continue;
      const key = sessionKeyAt(bytes, scan);
      const sourceId = sourceIds[i]!;
      const id = firstId + i;
      const t = ts[i]!;
      const seg = Math.floor(id / SEG_SIZE);
      const head = this.known.get(key);
      let e = head;
      while (e !== undefined && e.sourceId !== sourceId) e = e.other;
      if (e === undefined) {
        const session = typeof key === "number" ? sessionAt(bytes, scan) : key;
        if (typeof key !== "number" && !SESSION_ID.test(session)) continue;
        e = new SessionEntry(this.nextId++, true, sourceId, session);
        // Another source's session of the same id stays in the chain.
        e.other = head;
        this.known.set(key, e);
        // Most sessions of attack traffic are new ones of a single event: begun here, without
        // `begin` resetting what the constructor just set.
        e.batch = batch;
        e.srcIp = ips[i] || null;
        e.startTs = e.endTs = t;
        e.firstEventId = id;
        touched.push(e);
      } else if (e.batch !== batch) {
        begin(e, batch, id, t, ips[i] || null);
        touched.push(e);
        if (!e.fresh) {
          // Most recently active last.
          this.known.delete(key);
          this.known.set(key, head!);
        }
      }
      e.srcIp ??= ips[i] || null;
      if (t < e.startTs) e.startTs = t;
      if (t > e.endTs) e.endTs = t;
      e.lastEventId = id;
      e.events++;
      if (seg !== e.lastSeg) {
        if (seg !== segOf) segText = String((segOf = seg));
        e.segs = e.segs === "" && e.fresh ? segText : `${e.segs},${segText}`;
        e.lastSeg = seg;
      }
      switch (kinds[typeIds[i]!] ?? Kind.Other) {
        case Kind.LoginSuccess:
          if (!e.login && !e.newLogin) {
            const creds = credentials(bytes.toString("utf8", from, to));
            e.username = creds.username;
            e.password = creds.password;
          }
          e.newLogin = true;
          break;
        case Kind.Command:
          e.commands++;
          break;
        case Kind.File:
          e.files++;
          break;
        case Kind.TtyLog:
          e.ttylog = 1;
          break;
        case Kind.Closed:
          e.closed = 1;
          break;
      }
    }
    return touched;
  }

  /** Keeps at most `max` sessions in memory, forgetting the least recently active. */
  forget(max: number): void {
    let excess = this.known.size - max;
    if (excess <= 0) return;
    for (const key of this.known.keys()) {
      this.known.delete(key);
      if (--excess <= 0) break;
    }
  }

  /** Forgets one session (its row was deleted: if it sends again, it starts a new one). */
  unlink(session: string, id: number): void {
    const key = sessionKey(session);
    let head = this.known.get(key);
    if (head?.id === id) head = head.other;
    else for (let e = head; e?.other; e = e.other) if (e.other.id === id) e.other = e.other.other;
    if (head) this.known.set(key, head);
    else this.known.delete(key);
  }

  /** Knows a stored session (the SQLite writer's start), as the most recently active. */
  remember(e: SessionEntry): void {
    const key = sessionKey(e.session);
    e.other = this.known.get(key);
    this.known.set(key, e);
  }
}

/** Starts what a batch adds to a session, at its first event in the batch. */
function begin(e: SessionEntry, batch: number, id: number, t: number, ip: string | null): void {
  e.batch = batch;
  e.srcIp = ip;
  e.startTs = e.endTs = t;
  e.firstEventId = e.lastEventId = id;
  e.events = 0;
  e.newLogin = false;
  e.username = e.password = null;
  e.commands = e.files = e.ttylog = e.closed = 0;
  e.segs = "";
}
