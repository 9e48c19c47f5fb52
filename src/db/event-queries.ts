/**
 * The queries behind the events and stats endpoints (SQLite), on the main thread's connection,
 * reading committed data beside the writer (event-writer.ts): segment-pruned event pages, and
 * stats from the hourly and daily counters.
 */
import { and, asc, desc, eq, gte, inArray, like, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { unionAll } from "drizzle-orm/sqlite-core";
import { parseWithIds } from "../protocol/json";
import { addressesWhere, addressGeo } from "./address-store";
import { bloomHas } from "./bloom";
import { COUNT_KINDS, DAY_HOURS, HOUR_MS, SEG_SIZE, readDailyThrough, type CountKind, type SourceEntry, type TypeEntry } from "./event-store";
import { isKexType } from "./hassh";
import type { TopEntry } from "./read-limits";
import {
  COMMAND_EVENT,
  countPlan,
  fieldsValues,
  hasSourceFilter,
  readRecent,
  SEG_BITS,
  SegmentTallies,
  sourcesBySegment,
  StatsSample,
  Tally,
  topOf,
  type SegmentSpan,
  type SegmentTally,
  type SourceFilter,
  type StatsRange,
} from "./stats-range";

export type { TopEntry };
import type { Db } from "./index";
import {
  eventAddresses,
  eventCounts,
  eventCountsDaily,
  eventMeta,
  events,
  eventSegmentKeys,
  eventSegments,
  eventSources,
  eventTypes,
} from "./schema";
import { BASE_MAX_KEYS, candidates, MAX_SURE_KEYS, mergeTop, type BaseSums } from "./stats-cache";
import type { EventReader, MaybePromise } from "./stores";

/** Windows whose older hours' sums are kept (the dashboard's few: 24 h, 7 d, ...). */
const BASE_WINDOWS = 4;

export interface EventFilter {
  nodeId?: bigint;
  potId?: string;
  potType?: string;
  eventType?: string;
  srcIp?: string;
  /** The SSH client fingerprint of key exchange events (hassh.ts), lower-case hex. */
  hassh?: string;
  /** Only event types whose name passes (the types dictionary is read for them): `<kind>.login.*` and the like. */
  eventTypeMatch?: (name: string) => boolean;
  /** Source addresses enriched with this country (ISO 3166 code) and/or ASN (event_addresses). */
  country?: string;
  asn?: number;
  /** Inclusive lower bound on the event time, ms. */
  since?: number;
  /** Exclusive upper bound on the event time, ms. */
  until?: number;
}

export interface EventRow {
  id: number;
  ts: number;
  node_id: bigint | null;
  pot_id: string | null;
  pot_type: string | null;
  event_type: string;
  src_ip: string | null;
  data: Record<string, unknown>;
}

export interface EventPage {
  events: EventRow[];
  /** Id to pass as `cursor` for the next (older) page; null when there is none. */
  nextCursor: number | null;
}

/**
 * Segments one page may scan before it returns what it has with a cursor to go on from
 * (4096 segments = 16.7M events): keeps the worst case of a rare filter bounded per request.
 */
export const MAX_SEGMENTS_PER_PAGE = 4096;
/** Addresses of a country/ASN filter checked against each segment's Bloom filter at most. */
export const GEO_BLOOM_MAX = 64;
/** Segment summaries read per step while looking for candidates (256 Bloom filters = 2 MiB). */
export const SEGMENT_SLICE = 256;

/** The most frequent commands (`input`) of command events' data, read a page at a time, newest first (every backend). */
export async function topCommands<E>(
  page: (filter: EventFilter, cursor: number | null) => MaybePromise<{ events: E[]; nextCursor: number | null }>,
  input: (e: E) => unknown,
  since: number,
  top: number,
  until?: number,
): Promise<TopEntry[]> {
  const counts = new Tally();
  await readRecent(page, { eventType: COMMAND_EVENT, since, until }, (e) => {
    const cmd = input(e);
    if (typeof cmd === "string") counts.add(cmd);
  });
  return counts.top(top);
}

/**
 * The most frequent values of a data field or combination of fields (stats-range.ts fieldsValues) among the range's most
 * recent matching events, and how many events were read (every backend).
 */
export async function topField<E>(
  page: (filter: EventFilter, cursor: number | null) => MaybePromise<{ events: E[]; nextCursor: number | null }>,
  dataOf: (e: E) => Record<string, unknown>,
  filter: EventFilter,
  paths: readonly (readonly string[])[],
  top: number,
): Promise<{ values: TopEntry[]; sampled: number }> {
  const counts = new Tally();
  const sampled = await readRecent(page, filter, (e) => {
    for (const v of fieldsValues(dataOf(e), paths)) counts.add(v);
  });
  return { values: counts.top(top), sampled };
}

export interface StatsSummary {
  /** Every event stored (whatever the filter). */
  totalEvents: number;
  /** Events in the range (of the filter's sources), exactly: stats-range.ts countPlan, SegmentTallies. */
  windowEvents: number;
  /**
   * What the top lists count: without a filter, the hourly counters of the whole hours from
   * topStart to topEnd (every hour the range reaches into); with one, the range's most recent
   * `sampled` matching events.
   */
  topStart: number;
  topEnd: number;
  /** Events the top lists were counted over, when read from the events (a filter); null: from the counters. */
  sampled: number | null;
  top: Record<CountKind, TopEntry[]>;
  /** The commands and credential pairs, when the sample counted them (a filter). */
  commands?: TopEntry[];
  credentials?: TopEntry[];
}

/** What `statsOver` is asked: a range, a filter, entries per list. */
export interface StatsAsk {
  range: StatsRange;
  top: number;
  filter?: SourceFilter;
  now?: number;
}

/** The hours a range reaches into, as hour buckets: [from, to). */
export function rangeHours(r: StatsRange): { fromBucket: number; toBucket: number } {
  return { fromBucket: Math.floor(r.from / HOUR_MS), toBucket: Math.max(Math.floor(r.from / HOUR_MS) + 1, Math.ceil(r.to / HOUR_MS)) };
}

/** Dictionary ids as a list to write into a statement (integers, so no quoting is needed). */
export const sqlInts = (ids: readonly number[]): string => ids.map((id) => Math.trunc(id)).join(",");

/** Each of some segments' sources (their `source` segment keys). */
export function segmentSources(db: Db, segs: readonly SegmentSpan[]): Map<number, number[]> {
  if (segs.length === 0) return new Map();
  return sourcesBySegment(
    db.$client.query<{ seg: number; value: number }, [number, number]>("SELECT seg, value FROM event_segment_keys WHERE kind = 'source' AND seg BETWEEN ? AND ?").all(segs[0]!.seg, segs[segs.length - 1]!.seg),
  );
}

/** Reads whole segments (id ranges) counted by source and type into `tallies` (stats-range.ts SegmentTallies). */
export function keepTallies(db: Db, tallies: SegmentTallies, runs: readonly [number, number][], segs: readonly SegmentSpan[]): void {
  if (runs.length === 0) return;
  const q = db.$client.query<SegmentTally & { seg: number }, [number, number]>(`SELECT id >> ${SEG_BITS} AS seg, source_id AS source, type_id AS type, count(*) AS n FROM events WHERE id BETWEEN ? AND ? GROUP BY 1, 2, 3`);
  for (const [lo, hi] of runs) tallies.keep(q.all(lo, hi), segs);
}

/** Segments that reach into a range, in id order. */
export function segmentsIn(db: Db, range: StatsRange): SegmentSpan[] {
  return db.$client.query<SegmentSpan, [number, number]>("SELECT seg, min_ts AS minTs, max_ts AS maxTs, count FROM event_segments WHERE max_ts >= ? AND min_ts < ? ORDER BY seg").all(range.from, range.to);
}

/** Source ids matching the node/pot/kind filters; null when the filter names none of them. */
export function sourceIdsOf(db: Db, f: SourceFilter): number[] | null {
  const conds: SQL[] = [];
  if (f.nodeId !== undefined) conds.push(eq(eventSources.nodeId, f.nodeId.toString()));
  if (f.potId !== undefined) conds.push(eq(eventSources.potId, f.potId));
  if (f.potType !== undefined) conds.push(eq(eventSources.potType, f.potType));
  if (conds.length === 0) return null;
  return db.select({ id: eventSources.id }).from(eventSources).where(and(...conds)).all().map((r) => r.id);
}

/** The columns of an EventRow, for a select from `events` joined with its source and type. */
export const eventRowColumns = {
  id: events.id,
  ts: events.ts,
  nodeId: eventSources.nodeId,
  potId: eventSources.potId,
  potType: eventSources.potType,
  eventType: eventTypes.name,
  srcIp: events.srcIp,
  data: events.data,
};

export class EventQueries implements EventReader {

  private latest: ReturnType<EventQueries["latestStatement"]> | null = null;
  /** Kept sums of the stats' older hours, by the range's length in hours (stats-cache.ts). */
  private readonly baseCache = new Map<number, { key: string; kinds: Map<CountKind, BaseSums> }>();
  /** Filtered ranges' counts by source and type of whole segments (stats-range.ts). */
  private readonly tallies = new SegmentTallies();

  constructor(private readonly db: Db) {}

  private latestStatement() {
    return this.select().where(lte(events.id, sql.placeholder("upper"))).orderBy(desc(events.id)).limit(sql.placeholder("n")).prepare();
  }

  /** Committed positions of node spools, kept in event_meta under `spool:<node>:<spool>`. */
  spoolPositions(): Map<string, number> {
    const rows = this.db.select().from(eventMeta).where(sql`${eventMeta.key} like 'spool:%'`).all();
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  dictionaries(): { sources: SourceEntry[]; types: TypeEntry[] } {
    return { sources: this.db.select().from(eventSources).all(), types: this.db.select().from(eventTypes).all() };
  }

  topCommands(since: number, top: number, until?: number): Promise<TopEntry[]> {
    return topCommands(
      (f, cursor) => this.listStored(f, 1000, cursor),
      (e) => (JSON.parse(e.data) as { input?: unknown }).input,
      since,
      top,
      until,
    );
  }

  topField(filter: EventFilter, paths: readonly (readonly string[])[], top: number): Promise<{ values: TopEntry[]; sampled: number }> {
    return topField((f, cursor) => this.listStored(f, 1000, cursor), (e) => JSON.parse(e.data) as Record<string, unknown>, filter, paths, top);
  }

  get(id: number): EventRow | null {
    const r = this.select().where(eq(events.id, id)).get();
    return r ? toRow(r) : null;
  }

  list(filter: EventFilter, limit: number, cursor: number | null): EventPage {
    const page = this.listStored(filter, limit, cursor);
    return { events: page.events.map(toRow), nextCursor: page.nextCursor };
  }

  /** `list` with rows as stored: data still JSON text, for writing the page out without objects. */
  listStored(filter: EventFilter, limit: number, cursor: number | null): { events: StoredEvent[]; nextCursor: number | null } {
    const upper = cursor === null ? Number.MAX_SAFE_INTEGER : cursor - 1;
    if (upper < 1) return { events: [], nextCursor: null };

    const conds: SQL[] = [];
    const sourceIds = this.matchingSources(filter);
    if (sourceIds !== null) {
      if (sourceIds.length === 0) return { events: [], nextCursor: null };
      conds.push(inArray(events.sourceId, sourceIds));
    }
    let typeIds: number[] | null = null;
    if (filter.eventType !== undefined) {
      const typeId = this.db.select({ id: eventTypes.id }).from(eventTypes).where(eq(eventTypes.name, filter.eventType)).get()?.id;
      if (typeId === undefined) return { events: [], nextCursor: null };
      typeIds = [typeId];
    }
    if (filter.eventTypeMatch !== undefined) {
      const pass = filter.eventTypeMatch;
      const ids = this.db.select().from(eventTypes).all().filter((t) => pass(t.name)).map((t) => t.id);
      typeIds = typeIds === null ? ids : typeIds.filter((id) => ids.includes(id));
    }
    if (filter.hassh !== undefined) {
      // Only key exchange events carry one: the segments without them are skipped by their type keys.
      const kex = this.db
        .select()
        .from(eventTypes)
        .where(like(eventTypes.name, "%.client.kex"))
        .all()
        .filter((t) => isKexType(t.name))
        .map((t) => t.id);
      typeIds = typeIds === null ? kex : typeIds.filter((id) => kex.includes(id));
    }
    if (typeIds !== null) {
      if (typeIds.length === 0) return { events: [], nextCursor: null };
      conds.push(typeIds.length === 1 ? eq(events.typeId, typeIds[0]!) : inArray(events.typeId, typeIds));
    }
    if (filter.since !== undefined) conds.push(gte(events.ts, filter.since));
    if (filter.until !== undefined) conds.push(lt(events.ts, filter.until));

    if (filter.srcIp !== undefined) conds.push(eq(events.srcIp, filter.srcIp));
    // Country and ASN: the addresses that have them (a lookup per address, never per event).
    let geoIps: string[] | null = null;
    if (filter.country !== undefined || filter.asn !== undefined) {
      const where = { country: filter.country, asn: filter.asn };
      geoIps = addressesWhere(this.db, where);
      if (geoIps.length === 0) return { events: [], nextCursor: null };
      const geoConds: SQL[] = [];
      if (where.country !== undefined) geoConds.push(eq(eventAddresses.country, where.country));
      if (where.asn !== undefined) geoConds.push(eq(eventAddresses.asn, where.asn));
      conds.push(inArray(events.srcIp, this.db.select({ ip: eventAddresses.ip }).from(eventAddresses).where(and(...geoConds))));
    }
    // Last, so that it is read only of the rows every other condition let through.
    if (filter.hassh !== undefined) conds.push(sql`json_extract(${events.data}, '$.hassh') = ${filter.hassh}`);
    if (conds.length === 0) {
      // The most asked page (the latest events): its statement is built once.
      this.latest ??= this.latestStatement();
      const rows = this.latest.all({ upper, n: limit });
      return { events: rows, nextCursor: rows.length === limit ? rows[rows.length - 1]!.id : null };
    }

    // Within a candidate segment: a rowid range scan with every filter.
    const ph = sql.placeholder;
    const query = this.select()
      .where(and(gte(events.id, ph("lo")), lte(events.id, ph("upper")), ...conds))
      .orderBy(desc(events.id))
      .limit(ph("n"))
      .prepare();
    const out: StoredEvent[] = [];
    let scanned = 0;
    for (const seg of this.candidateSegments(filter, typeIds, sourceIds, Math.floor(upper / SEG_SIZE), geoIps)) {
      if (scanned++ >= MAX_SEGMENTS_PER_PAGE) return { events: out, nextCursor: (seg + 1) * SEG_SIZE };
      const lo = seg * SEG_SIZE;
      const rows = query.all({ lo, upper: Math.min(upper, lo + SEG_SIZE - 1), n: limit - out.length });
      for (const r of rows) out.push(r);
      if (out.length === limit) return { events: out, nextCursor: out[out.length - 1]!.id };
    }
    return { events: out, nextCursor: null };
  }

  /** Source ids matching the node/pot filters; null when the filter names none of them. */
  private matchingSources(f: EventFilter): number[] | null {
    return sourceIdsOf(this.db, f);
  }

  /**
   * Segments that can hold a match, newest first: within the time range (per-segment min/max),
   * holding the event type and source (segment keys), and whose Bloom filter may hold the
   * address. Read a slice at a time, so a filter that matches early reads little.
   */
  private *candidateSegments(f: EventFilter, typeIds: number[] | null, sourceIds: number[] | null, topSeg: number, geoIps: string[] | null = null): Generator<number> {
    const keyed = (kind: string, values: number[]) =>
      new Set(
        this.db
          .selectDistinct({ seg: eventSegmentKeys.seg })
          .from(eventSegmentKeys)
          .where(and(eq(eventSegmentKeys.kind, kind), inArray(eventSegmentKeys.value, values), lte(eventSegmentKeys.seg, topSeg)))
          .all()
          .map((r) => r.seg),
      );
    const withType = typeIds === null ? null : keyed("type", typeIds);
    const withSource = sourceIds === null ? null : keyed("source", sourceIds);
    const ip = f.srcIp;
    // A few addresses of a country or ASN are checked against the Bloom filters too; many would
    // cost more in hashing than scanning the segments does.
    const anyOf = geoIps !== null && geoIps.length <= GEO_BLOOM_MAX ? geoIps : null;
    const ph = sql.placeholder;
    const conds: SQL[] = [lt(eventSegments.seg, ph("below"))];
    if (f.since !== undefined) conds.push(gte(eventSegments.maxTs, f.since));
    if (f.until !== undefined) conds.push(lt(eventSegments.minTs, f.until));
    const slice = this.db
      .select({ seg: eventSegments.seg, bloom: ip === undefined && anyOf === null ? sql<null>`null` : eventSegments.ipBloom })
      .from(eventSegments)
      .where(and(...conds))
      .orderBy(desc(eventSegments.seg))
      .limit(SEGMENT_SLICE)
      .prepare();
    for (let below = topSeg + 1; ; ) {
      const rows = slice.all({ below });
      if (rows.length === 0) return;
      for (const r of rows) {
        if (withType && !withType.has(r.seg)) continue;
        if (withSource && !withSource.has(r.seg)) continue;
        if (ip !== undefined && !bloomHas(r.bloom as Uint8Array, ip)) continue;
        if (anyOf !== null && !anyOf.some((a) => bloomHas(r.bloom as Uint8Array, a))) continue;
        yield r.seg;
      }
      below = rows[rows.length - 1]!.seg;
    }
  }

  /** `statsOver` the last `windowMs` up to `now`. */
  stats(windowMs: number, top: number, now = Date.now()): StatsSummary {
    return this.statsOf({ from: now - windowMs, to: now }, top, now);
  }

  /**
   * Totals and top lists over a range. Without a filter: the top lists over the hours the
   * range reaches into, whole days already summed up read from the daily counters, the hours
   * around them from the hourly ones; the newest hours are added to kept sums of the older
   * ones (stats-cache.ts); one read transaction, so every part is of the same commit. With a
   * filter: the range's most recent matching events (stats-range.ts StatsSample).
   */
  statsOver(ask: StatsAsk): StatsSummary | Promise<StatsSummary> {
    const now = ask.now ?? Date.now();
    const f = ask.filter ?? {};
    if (!hasSourceFilter(f)) return this.statsOf(ask.range, ask.top, now);
    return this.filteredStats(ask.range, ask.top, f);
  }

  private statsOf(range: StatsRange, top: number, now: number): StatsSummary {
    return this.db.$client.transaction(() => this.statsNow(range, top, now))();
  }

  private async filteredStats(range: StatsRange, top: number, f: SourceFilter): Promise<StatsSummary> {
    const sample = new StatsSample();
    const sources = this.matchingSources(f) ?? [];
    const sampled = sources.length === 0 ? 0 : await readRecent((filter, cursor) => this.listStored(filter, 1000, cursor), { ...f, since: range.from, until: range.to }, (e) => sample.add({ srcIp: e.srcIp, eventType: e.eventType, data: JSON.parse(e.data) }));
    const lists = await sample.lists(top, (ips) => addressGeo(this.db, ips));
    const counted = this.db.$client.transaction(() => ({ total: this.totalEvents(), byType: sources.length === 0 ? new Map<number, number>() : this.countByType(range, sources) }))();
    const names = new Map(this.db.select().from(eventTypes).all().map((t) => [t.id, t.name]));
    const byName = new Map([...counted.byType].map(([id, n]) => [names.get(id) ?? String(id), n]));
    const windowEvents = [...counted.byType.values()].reduce((a, n) => a + n, 0);
    return { totalEvents: counted.total, windowEvents, topStart: range.from, topEnd: range.to, sampled, top: { ...lists.top, event_type: topOf(byName, top) }, commands: lists.commands, credentials: lists.credentials };
  }

  private totalEvents(): number {
    return this.db.select({ n: sql<number | null>`sum(${eventSegments.count})` }).from(eventSegments).get()?.n ?? 0;
  }

  private segmentsIn(range: StatsRange): SegmentSpan[] {
    return segmentsIn(this.db, range);
  }

  /** Events in a range, exactly: stored counts where a segment is wholly in, the rest read (stats-range.ts countPlan). */
  private countRange(range: StatsRange): number {
    const plan = countPlan(this.segmentsIn(range), range);
    const q = this.db.$client.query<{ n: number }, [number, number, number, number]>("SELECT count(*) AS n FROM events WHERE id BETWEEN ? AND ? AND ts >= ? AND ts < ?");
    let n = plan.summed;
    for (const [lo, hi] of plan.scan) n += q.get(lo, hi, range.from, range.to)?.n ?? 0;
    return n;
  }

  /** Events of some sources in a range by type id, exactly (stats-range.ts SegmentTallies). */
  private countByType(range: StatsRange, sources: number[]): Map<number, number> {
    const segs = this.segmentsIn(range);
    const out = new Map<number, number>();
    if (segs.length === 0) return out;
    const match = new Set(sources);
    const plan = this.tallies.plan(segs, range, match, segmentSources(this.db, segs));
    keepTallies(this.db, this.tallies, plan.missing, segs);
    this.tallies.add(plan.whole, match, out);
    // Source ids are the dictionary's integers: written into the statement, they keep it one prepared query.
    const edge = this.db.$client.query<{ type: number; n: number }, [number, number, number, number]>(
      `SELECT type_id AS type, count(*) AS n FROM events WHERE id BETWEEN ? AND ? AND ts >= ? AND ts < ? AND source_id IN (${sqlInts(sources)}) GROUP BY 1`,
    );
    for (const [lo, hi] of plan.edges) for (const r of edge.all(lo, hi, range.from, range.to)) out.set(r.type, (out.get(r.type) ?? 0) + r.n);
    return out;
  }

  private statsNow(range: StatsRange, top: number, now: number): StatsSummary {
    const { fromBucket, toBucket } = rangeHours(range);
    const totalEvents = this.totalEvents();
    // Daily counters for the days [d0, d1); hourly ones before d0 and from d1 on.
    const d0 = Math.ceil(fromBucket / DAY_HOURS);
    const d1 = Math.max(d0, Math.min(Math.floor(now / HOUR_MS / DAY_HOURS), Math.floor(toBucket / DAY_HOURS), (readDailyThrough(this.db) ?? -Infinity) + 1));
    // The current and the previous hour still get counts: read each time. The older ones are kept.
    const hotFrom = Math.min(toBucket, Math.max(fromBucket, Math.floor(now / HOUR_MS) - 1));
    const hourly = (kind: CountKind, from: number, below: number) =>
      this.db
        .select({ key: eventCounts.key, n: eventCounts.count })
        .from(eventCounts)
        .where(
          and(
            eq(eventCounts.kind, kind),
            gte(eventCounts.bucket, from),
            lt(eventCounts.bucket, below),
            or(lt(eventCounts.bucket, d0 * DAY_HOURS), gte(eventCounts.bucket, d1 * DAY_HOURS)),
          ),
        );
    const daily = (kind: CountKind) =>
      this.db
        .select({ key: eventCountsDaily.key, n: eventCountsDaily.count })
        .from(eventCountsDaily)
        .where(and(eq(eventCountsDaily.kind, kind), gte(eventCountsDaily.day, d0), lt(eventCountsDaily.day, d1)));
    const summed = (rows: ReturnType<typeof hourly> | ReturnType<typeof unionAll>, limit: number | null) => {
      const c = rows.as("counts");
      const total = sql<number>`sum(${c.n})`;
      const q = this.db.select({ value: c.key, count: total }).from(c).groupBy(c.key).orderBy(desc(total), asc(c.key));
      return (limit === null ? q : q.limit(limit)).all();
    };
    const windowEvents = this.countRange(range);

    const base = this.baseSums(toBucket - fromBucket, fromBucket, toBucket, d0, d1, hotFrom, (kind) => summed(unionAll(hourly(kind, fromBucket, hotFrom), daily(kind)), null));
    const topOf = (kind: CountKind): TopEntry[] => {
      const b = base?.get(kind);
      if (!b) return summed(unionAll(hourly(kind, fromBucket, toBucket), daily(kind)), top);
      const { sure, least } = candidates(b, top);
      // The hot counts of the base's leaders, and every other key whose hot count can lift it to `least`.
      const c = hourly(kind, hotFrom, toBucket).as("counts");
      const total = sql<number>`sum(${c.n})`;
      const hot = (where: SQL | undefined, having: SQL | undefined) =>
        this.db.select({ value: c.key, count: total }).from(c).where(where).groupBy(c.key).having(having).all();
      if (sure.length > MAX_SURE_KEYS) return mergeTop(b, hot(undefined, undefined), top);
      const rows = [...hot(inArray(c.key, sure), undefined), ...hot(undefined, sql`${total} >= ${least}`)];
      return mergeTop(b, rows, top);
    };
    const topLists = Object.fromEntries(COUNT_KINDS.map((k) => [k, topOf(k)])) as Record<CountKind, TopEntry[]>;
    return { totalEvents, windowEvents, topStart: fromBucket * HOUR_MS, topEnd: toBucket * HOUR_MS, sampled: null, top: topLists };
  }

  /**
   * The kept sums of the window's hours before `hotFrom`, per kind, summed again when the window
   * moved on or any of those hours changed (its event_type total did: see stats-cache.ts); null
   * when a kind has more keys than is worth keeping.
   */
  private baseSums(hours: number, fromBucket: number, toBucket: number, d0: number, d1: number, hotFrom: number, sum: (kind: CountKind) => TopEntry[]): Map<CountKind, BaseSums> | null {
    const totals = this.db
      .select({ bucket: eventCounts.bucket, n: sql<number>`sum(${eventCounts.count})` })
      .from(eventCounts)
      .where(and(eq(eventCounts.kind, "event_type"), gte(eventCounts.bucket, fromBucket), lt(eventCounts.bucket, hotFrom)))
      .groupBy(eventCounts.bucket)
      .orderBy(eventCounts.bucket)
      .all();
    const key = `${fromBucket}:${toBucket}:${d0}:${d1}:${hotFrom}:${totals.map((t) => `${t.bucket}=${t.n}`).join(",")}`;
    const kept = this.baseCache.get(hours);
    if (kept?.key === key) return kept.kinds;
    this.baseCache.delete(hours);
    const kinds = new Map<CountKind, BaseSums>();
    for (const kind of COUNT_KINDS) {
      const rows = sum(kind);
      if (rows.length > BASE_MAX_KEYS) return null;
      kinds.set(kind, { key, sums: new Map(rows.map((r) => [r.value, r.count])), sorted: rows.map((r) => r.value) });
    }
    if (this.baseCache.size >= BASE_WINDOWS) this.baseCache.delete(this.baseCache.keys().next().value!);
    this.baseCache.set(hours, { key, kinds });
    return kinds;
  }

  private select() {
    return this.db
      .select(eventRowColumns)
      .from(events)
      .leftJoin(eventSources, eq(eventSources.id, events.sourceId))
      .innerJoin(eventTypes, eq(eventTypes.id, events.typeId))
      .$dynamic();
  }
}

/** An event row as read from the database: node id as decimal text, data as JSON text. */
export interface StoredEvent {
  id: number;
  ts: number;
  nodeId: string | null;
  potId: string | null;
  potType: string | null;
  eventType: string;
  srcIp: string | null;
  data: string;
}

export function toRow(r: StoredEvent): EventRow {
  return {
    id: r.id,
    ts: r.ts,
    node_id: r.nodeId === null ? null : BigInt(r.nodeId),
    pot_id: r.potId,
    pot_type: r.potType,
    event_type: r.eventType,
    src_ip: r.srcIp,
    // Exact u64 node ids nested in data need the exact parser; everything else the fast one.
    data: r.data.includes('"node_id"') ? (parseWithIds(r.data) as Record<string, unknown>) : JSON.parse(r.data),
  };
}
