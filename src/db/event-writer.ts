/**
 * The batched writer of the event tables (SQLite): one transaction per batch holding the
 * events, their segments' summaries and Bloom filters, and their sessions; retention; and,
 * after each commit, what the batch adds to the stats counters (count-writer.ts). It runs in the ingest
 * worker thread (or inline for `:memory:` databases), beside the queries (event-queries.ts)
 * reading committed data on the main thread's connection (WAL).
 */
import { isUtf8 } from "node:buffer";
import { and, asc, eq, gte, lt, lte, sql } from "drizzle-orm";
import { AddressWriter, type GeoResolver } from "./address-store";
import { CountWriter } from "./count-writer";
import { IMMEDIATE, LAST_ID, SEG_SIZE, batchBytes, batchData, metaUpsert, type EventBatch, type TypeEntry } from "./event-store";
import type { Db } from "./index";
import { positional, slot } from "./positional";
import { SegmentSummaries } from "./segment-summary";
import { kindOfType, type Kind } from "./session-fields";
import { SessionTracker } from "./session-tracker";
import { eventMeta, events, eventSegmentKeys, eventSegments, eventSources, eventTypes } from "./schema";

/**
 * Events per INSERT statement: bun:sqlite pays a call per statement, so 32 rows at once cost
 * ~0.15 µs less per event than one row per statement (measured; the rows themselves cost SQLite
 * ~1.1 µs). The statement runs with bun:sqlite's binding, not Drizzle's (see positional.ts).
 */
const ROWS_PER_INSERT = 32;
const EVENT_COLUMNS = 6;

/**
 * Values for `rows` events whose placeholders are named by position ("0", "1", ...), so that
 * one reused array holds the values (Drizzle looks a placeholder up by name in what it is
 * given, and an array's indices are names).
 *
 * The data is bound as the batch's UTF-8 bytes, cast to text: the same text SQLite would
 * store from the decoded string (a cast takes the bytes as they are), without decoding every
 * event into a string that bun:sqlite then encodes back (measured: ~0.15 µs per event less).
 * Without the cast a blob would be stored, which the JSON functions read as JSONB. Text bound
 * there stays text.
 */
function eventRows(rows: number) {
  const ph = (i: number) => sql`${slot(i)}`;
  return Array.from({ length: rows }, (_, r) => {
    const at = r * EVENT_COLUMNS;
    return { id: ph(at), ts: ph(at + 1), sourceId: ph(at + 2), typeId: ph(at + 3), srcIp: ph(at + 4), data: sql`cast(${slot(at + 5)} as text)` };
  });
}

/**
 * The only writer of the event tables. Not thread-safe and not meant to be: one instance per
 * database, in one thread.
 */
export class EventWriter {
  private lastId: number;
  private readonly typeNames = new Map<number, string>();
  /** What each event type adds to a session (by type id). */
  private readonly typeKinds: Kind[] = [];
  private readonly sessions: SessionTracker;
  private readonly counts: CountWriter;
  /** What batches add to the segment summaries (segment-summary.ts, the step the PostgreSQL writers run too). */
  private readonly summaries = new SegmentSummaries();

  /** Inserts ROWS_PER_INSERT events; `insertEvent` one (the rest of a batch). */
  private readonly insertEvents;
  private readonly insertEvent;
  private readonly insertSource;
  private readonly insertType;
  private readonly upsertSegment;
  private readonly insertSegmentKey;
  private readonly setMeta;
  /** The values of `insertEvents` (and of `insertEvent`), in placeholder order, reused for every statement. */
  private readonly rowValues: unknown[] = new Array(ROWS_PER_INSERT * EVENT_COLUMNS);
  private readonly oneValues: unknown[] = new Array(EVENT_COLUMNS);

  constructor(
    private readonly db: Db,
    geo?: GeoResolver,
  ) {
    const ph = sql.placeholder;
    this.insertEvents = positional(db, db.insert(events).values(eventRows(ROWS_PER_INSERT)));
    this.insertEvent = positional(db, db.insert(events).values(eventRows(1)));
    this.insertSource = db
      .insert(eventSources)
      .values({ id: ph("id"), nodeId: ph("nodeId"), potId: ph("potId"), potType: ph("potType") })
      .onConflictDoNothing()
      .prepare();
    this.insertType = db.insert(eventTypes).values({ id: ph("id"), name: ph("name") }).onConflictDoNothing().prepare();
    this.upsertSegment = db
      .insert(eventSegments)
      .values({ seg: ph("seg"), minTs: ph("minTs"), maxTs: ph("maxTs"), count: ph("count"), ipBloom: ph("ipBloom") })
      .onConflictDoUpdate({
        target: eventSegments.seg,
        set: {
          minTs: sql`min(${eventSegments.minTs}, excluded.min_ts)`,
          maxTs: sql`max(${eventSegments.maxTs}, excluded.max_ts)`,
          count: sql`${eventSegments.count} + excluded.count`,
          ipBloom: sql`excluded.ip_bloom`,
        },
      })
      .prepare();
    this.insertSegmentKey = db.insert(eventSegmentKeys).values({ kind: ph("kind"), value: ph("value"), seg: ph("seg") }).onConflictDoNothing().prepare();
    this.setMeta = metaUpsert(db);

    const lastGiven = db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, LAST_ID)).get()?.value ?? 0;
    this.lastId = Math.max(lastGiven, db.select({ max: sql<number | null>`max(${events.id})` }).from(events).get()?.max ?? 0);
    this.counts = new CountWriter(db, geo ? new AddressWriter(db, geo) : null);
    for (const t of db.select().from(eventTypes).all()) this.addType(t);
    this.sessions = new SessionTracker(db);
    const lastSeg = Math.floor(this.lastId / SEG_SIZE);
    const stored = db.select({ bits: eventSegments.ipBloom }).from(eventSegments).where(eq(eventSegments.seg, lastSeg)).get();
    if (stored) this.summaries.useBloom(lastSeg, new Uint8Array(stored.bits));
    this.counts.recount(this.lastId);
  }

  /** Commits one batch; returns the id of its first event (the others follow in order). */
  write(b: EventBatch): number {
    const firstId = this.lastId + 1;
    const ips = b.srcIps.split("\n");
    const bytes = batchBytes(b);
    // What the pipeline writes is valid UTF-8 (checked: ~0.01 µs per event). Anything else is
    // decoded as before, invalid sequences becoming U+FFFD in what is stored.
    const text = isUtf8(bytes) ? null : batchData(b);
    const view = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length);
    const rows = this.rowValues;
    const segs = this.summaries.summarize(b.n, firstId, b.ts, b.typeId, b.sourceId, ips);
    const keys = this.summaries.newKeys(segs);
    for (const t of b.newTypes) this.addType(t);
    this.db.transaction(() => {
      for (const s of b.newSources) this.insertSource.run(s);
      // In the same transaction as the events: a position is stored exactly when its events are.
      for (const [key, value] of b.spools) this.setMeta.run({ key, value });
      this.setMeta.run({ key: LAST_ID, value: firstId + b.n - 1 });
      for (const t of b.newTypes) this.insertType.run(t);
      let id = firstId;
      // Rows go in ROWS_PER_INSERT at a time, the last few one by one.
      const whole = b.n - (b.n % ROWS_PER_INSERT);
      for (let i = 0, from = 0; i < b.n; i++, id++) {
        const to = b.dataEnds[i]!;
        const rest = i >= whole;
        const v = rest ? this.oneValues : rows;
        const at = rest ? 0 : (i % ROWS_PER_INSERT) * EVENT_COLUMNS;
        v[at] = id;
        v[at + 1] = b.ts[i]!;
        v[at + 2] = b.sourceId[i]!;
        v[at + 3] = b.typeId[i]!;
        v[at + 4] = ips[i] || null;
        // An empty view might be bound as NULL.
        v[at + 5] = text !== null ? text[i]! : to > from ? view.subarray(from, to) : "";
        from = to;
        if (rest) this.insertEvent(v);
        else if (at === (ROWS_PER_INSERT - 1) * EVENT_COLUMNS) this.insertEvents(v);
      }
      for (const s of segs) this.upsertSegment.run({ seg: s.seg, minTs: s.minTs, maxTs: s.maxTs, count: s.count, ipBloom: s.bloom });
      for (let k = 0; k < keys.kinds.length; k++) this.insertSegmentKey.run({ kind: keys.kinds[k]!, value: keys.values[k]!, seg: keys.segs[k]! });
      this.sessions.write(b.n, firstId, bytes, b.dataEnds, b.ts, b.sourceId, b.typeId, ips, this.typeKinds);
    }, IMMEDIATE);
    this.sessions.committed();
    // Only now: a rolled-back batch must not leave keys marked as written.
    this.summaries.committed(keys);
    this.lastId = firstId + b.n - 1;
    this.counts.countBatch(b, ips, this.typeName);
    return firstId;
  }

  private addType(t: TypeEntry): void {
    this.typeNames.set(t.id, t.name);
    this.typeKinds[t.id] = kindOfType(t.name);
  }

  private readonly typeName = (id: number) => this.typeNames.get(id) ?? String(id);

  /** True when counts wait in memory for `flushCounts`. */
  get countsPending(): boolean {
    return this.counts.pending;
  }

  /** Writes the in-memory counts and moves the watermark to the last committed event. */
  flushCounts(): void {
    this.counts.flush(this.lastId);
  }

  /** Sums up the next finished day of the counters (see CountWriter.rollUpDay). */
  rollUpDay(now = Date.now()): boolean {
    return this.counts.rollUpDay(now);
  }

  /**
   * Deletes at most about `maxRows` events older than `cutoffMs` (and the summaries and
   * counters that only they fed); returns how many it deleted. Called between batches, so
   * retention never holds the write lock for long.
   */
  retentionStep(cutoffMs: number, maxRows: number): number {
    const seg = this.db
      .select()
      .from(eventSegments)
      .where(lt(eventSegments.minTs, cutoffMs))
      .orderBy(asc(eventSegments.seg))
      .limit(1)
      .get();
    if (!seg) {
      const sessionsDeleted = this.db.transaction(() => this.sessions.retentionStep(cutoffMs, maxRows), IMMEDIATE);
      if (sessionsDeleted > 0) return sessionsDeleted;
      this.counts.deleteBefore(cutoffMs);
      return 0;
    }
    const lo = seg.seg * SEG_SIZE;
    const hi = lo + SEG_SIZE - 1;
    let deleted = 0;
    this.db.transaction(() => {
      if (seg.maxTs < cutoffMs) {
        // Wholly old: delete from the start of the segment, a chunk at a time.
        const first = this.db.select({ id: events.id }).from(events).where(and(gte(events.id, lo), lte(events.id, hi))).orderBy(asc(events.id)).limit(1).get();
        if (first) deleted = changes(this.db.delete(events).where(and(gte(events.id, first.id), lte(events.id, Math.min(hi, first.id + maxRows - 1)))).run());
      } else {
        deleted = changes(this.db.delete(events).where(and(gte(events.id, lo), lte(events.id, hi), lt(events.ts, cutoffMs))).run());
      }
      const left = this.db
        .select({ n: sql<number>`count(*)`, minTs: sql<number | null>`min(${events.ts})`, maxTs: sql<number | null>`max(${events.ts})` })
        .from(events)
        .where(and(gte(events.id, lo), lte(events.id, hi)))
        .get()!;
      if (left.n === 0) {
        this.db.delete(eventSegments).where(eq(eventSegments.seg, seg.seg)).run();
        this.db.delete(eventSegmentKeys).where(eq(eventSegmentKeys.seg, seg.seg)).run();
      } else {
        this.db.update(eventSegments).set({ count: left.n, minTs: left.minTs!, maxTs: left.maxTs! }).where(eq(eventSegments.seg, seg.seg)).run();
      }
    }, IMMEDIATE);
    this.summaries.forgetKeys();
    // A segment whose old events are gone already is not "done": report progress so the caller goes on.
    return Math.max(deleted, 1);
  }
}

/** Rows a statement changed (bun:sqlite reports it; Drizzle's types say void). */
const changes = (result: unknown): number => (result as { changes?: number } | undefined)?.changes ?? 0;
