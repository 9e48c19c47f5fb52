/**
 * The queries behind the events and stats endpoints on PostgreSQL: the same plan as the
 * SQLite store (../event-queries.ts, EventQueries): filters on node, pot, type and address are
 * answered per segment of 4096 ids from the segment summaries, newest first, and a segment is
 * read by its id range (B-tree on id) within its time range (which prunes the day partitions).
 */
import type { SQL } from "bun";
import { COUNT_KINDS, DAILY_THROUGH, DAY_HOURS, HOUR_MS, SEG_SIZE, type CountKind, type SourceEntry, type TypeEntry } from "../event-store";
import {
  GEO_BLOOM_MAX,
  MAX_SEGMENTS_PER_PAGE,
  SEGMENT_SLICE,
  rangeHours,
  topCommands,
  topField,
  toRow,
  type EventFilter,
  type EventPage,
  type EventRow,
  type StatsAsk,
  type StatsSummary,
  type TopEntry,
} from "../event-queries";
import { countPlan, hasSourceFilter, readRecent, SEG_BITS, SegmentTallies, sourcesBySegment, StatsSample, topOf, type SegmentSpan, type SegmentTally, type SourceFilter, type StatsRange } from "../stats-range";
import { bloomHas } from "../bloom";
import { hasshOf, isKexType } from "../hassh";
import type { EventReader, IngestStart } from "../stores";
import { addressCondition, PgAddressStore } from "./address-store";

type Raw = { id: string; ts: string; node_id: string | null; pot_id: string | null; pot_type: string | null; event_type: string; src_ip: string | null; data: string };

const row = (r: Raw): EventRow =>
  toRow({ id: Number(r.id), ts: Number(r.ts), nodeId: r.node_id, potId: r.pot_id, potType: r.pot_type, eventType: r.event_type, srcIp: r.src_ip, data: r.data });

/** Segments that reach into a range, in id order. */
export function pgSegmentsIn(sql: SQL, range: StatsRange): Promise<SegmentSpan[]> {
  return sql`select seg::float8 as seg, min_ts::float8 as "minTs", max_ts::float8 as "maxTs", count::float8 as count
    from event_segments where max_ts >= ${range.from} and min_ts < ${range.to} order by seg`;
}

/** Each of some segments' sources (their `source` segment keys). */
export async function pgSegmentSources(sql: SQL, segs: readonly SegmentSpan[]): Promise<Map<number, number[]>> {
  if (segs.length === 0) return new Map();
  return sourcesBySegment(await sql`select seg::float8 as seg, value from event_segment_keys where kind = 'source' and seg between ${segs[0]!.seg} and ${segs[segs.length - 1]!.seg}`);
}

/** Reads whole segments (id ranges) counted by source and type into `tallies` (../stats-range.ts SegmentTallies). */
export async function pgKeepTallies(sql: SQL, tallies: SegmentTallies, runs: readonly [number, number][], segs: readonly SegmentSpan[]): Promise<void> {
  for (const [lo, hi] of runs) {
    const rows: (SegmentTally & { seg: number })[] = await sql`select (id >> ${SEG_BITS})::float8 as seg, source_id as source, type_id as type, count(*)::float8 as n
      from events where id between ${lo} and ${hi} group by 1, 2, 3`;
    tallies.keep(rows, segs);
  }
}

/** Source ids matching the node/pot/kind filters; null when the filter names none of them. */
export async function pgSourceIds(sql: SQL, f: SourceFilter): Promise<number[] | null> {
  const conds: any[] = [];
  if (f.nodeId !== undefined) conds.push(sql`node_id = ${f.nodeId.toString()}`);
  if (f.potId !== undefined) conds.push(sql`pot_id = ${f.potId}`);
  if (f.potType !== undefined) conds.push(sql`pot_type = ${f.potType}`);
  if (conds.length === 0) return null;
  const where = conds.reduce((a, p) => sql`${a} and ${p}`);
  return (await sql`select id from event_sources where ${where}`).map((r: { id: number }) => r.id);
}

export class PgEventQueries implements EventReader {
  private readonly addresses: PgAddressStore;
  /** Filtered ranges' counts by source and type of whole segments (../stats-range.ts). */
  private readonly tallies = new SegmentTallies();

  constructor(private readonly sql: SQL) {
    this.addresses = new PgAddressStore(sql);
  }

  topCommands(since: number, top: number, until?: number): Promise<TopEntry[]> {
    return topCommands(
      (f, cursor) => this.list(f, 1000, cursor),
      (e) => e.data.input,
      since,
      top,
      until,
    );
  }

  topField(filter: EventFilter, paths: readonly (readonly string[])[], top: number): Promise<{ values: TopEntry[]; sampled: number }> {
    return topField((f, cursor) => this.list(f, 1000, cursor), (e) => e.data, filter, paths, top);
  }

  async ingestStart(): Promise<IngestStart> {
    const sources: SourceEntry[] = (await this.sql`select id, node_id, pot_id, pot_type from event_sources`).map((r: any) => ({ id: r.id, nodeId: r.node_id, potId: r.pot_id, potType: r.pot_type }));
    const types: TypeEntry[] = (await this.sql`select id, name from event_types`).map((r: any) => ({ id: r.id, name: r.name }));
    const spools = new Map<string, number>((await this.sql`select key, value::float8 as v from event_meta where key like 'spool:%'`).map((r: any) => [r.key, r.v]));
    return { dictionaries: { sources, types }, spools };
  }

  /** `where` is built of fragments, so every value stays a parameter. */
  private select(where: SQL.Query<any> | SQL.Helper<any> | ReturnType<SQL["unsafe"]>, tail: SQL.Query<any> | ReturnType<SQL["unsafe"]>) {
    const sql = this.sql;
    return sql`select e.id, e.ts, s.node_id, s.pot_id, s.pot_type, t.name as event_type, e.src_ip, e.data
      from events e left join event_sources s on s.id = e.source_id join event_types t on t.id = e.type_id
      where ${where} ${tail}` as Promise<Raw[]>;
  }

  async get(id: number): Promise<EventRow | null> {
    const sql = this.sql;
    // The segment's time range narrows the lookup to the partitions that can hold it.
    const [seg] = await sql`select min_ts, max_ts from event_segments where seg = ${Math.floor(id / SEG_SIZE)}`;
    if (!seg) return null;
    const [r] = await this.select(sql`e.id = ${id} and e.ts between ${seg.min_ts} and ${seg.max_ts}`, sql``);
    return r ? row(r) : null;
  }

  async list(filter: EventFilter, limit: number, cursor: number | null): Promise<EventPage> {
    const sql = this.sql;
    const upper = cursor === null ? Number.MAX_SAFE_INTEGER : cursor - 1;
    if (upper < 1) return { events: [], nextCursor: null };
    const conds: any[] = [];
    const sourceIds = await this.matchingSources(filter);
    if (sourceIds !== null) {
      if (sourceIds.length === 0) return { events: [], nextCursor: null };
      conds.push(sql`e.source_id = any(${sql.array(sourceIds, "INT")})`);
    }
    let typeIds: number[] | null = null;
    if (filter.eventType !== undefined) {
      const [t] = await sql`select id from event_types where name = ${filter.eventType}`;
      if (!t) return { events: [], nextCursor: null };
      typeIds = [t.id];
    }
    if (filter.eventTypeMatch !== undefined) {
      const pass = filter.eventTypeMatch;
      const ids = (await sql`select id, name from event_types`).filter((t: TypeEntry) => pass(t.name)).map((t: TypeEntry) => t.id);
      typeIds = typeIds === null ? ids : typeIds.filter((id) => ids.includes(id));
    }
    const hassh = filter.hassh;
    if (hassh !== undefined) {
      // Only key exchange events carry one (../hassh.ts): the segments without them are skipped by their type keys.
      const kex = (await sql`select id, name from event_types where name like '%.client.kex'`).filter((t: TypeEntry) => isKexType(t.name)).map((t: TypeEntry) => t.id);
      typeIds = typeIds === null ? kex : typeIds.filter((id) => kex.includes(id));
    }
    if (typeIds !== null) {
      if (typeIds.length === 0) return { events: [], nextCursor: null };
      conds.push(typeIds.length === 1 ? sql`e.type_id = ${typeIds[0]!}` : sql`e.type_id = any(${sql.array(typeIds, "INT")})`);
    }
    // The value as JSON text narrows the rows; each is then read to check it is the `hassh` field.
    // Not `data::json ->> 'hassh'`: PostgreSQL refuses to read text holding \u0000 anywhere in the event.
    if (hassh !== undefined) conds.push(sql`strpos(e.data, ${JSON.stringify(hassh)}) > 0`);
    if (filter.since !== undefined) conds.push(sql`e.ts >= ${filter.since}`);
    if (filter.until !== undefined) conds.push(sql`e.ts < ${filter.until}`);
    if (filter.srcIp !== undefined) conds.push(sql`e.src_ip = ${filter.srcIp}`);
    // Country and ASN: the addresses that have them (a lookup per address, never per event).
    let geoIps: string[] | null = null;
    if (filter.country !== undefined || filter.asn !== undefined) {
      const where = { country: filter.country, asn: filter.asn };
      // A few are checked against the segments' Bloom filters too; more cost more in hashing than scanning does.
      const some = await this.addresses.where(where, GEO_BLOOM_MAX + 1);
      if (some.length === 0) return { events: [], nextCursor: null };
      if (some.length <= GEO_BLOOM_MAX) geoIps = some;
      conds.push(sql`e.src_ip in (select ip from event_addresses where ${addressCondition(sql, where)})`);
    }
    const and = (parts: any[]) => parts.reduce((a, p) => sql`${a} and ${p}`);

    if (conds.length === 0) {
      const rows = await this.select(sql`e.id <= ${upper}`, sql`order by e.id desc limit ${limit}`);
      return { events: rows.map(row), nextCursor: rows.length === limit ? Number(rows[rows.length - 1]!.id) : null };
    }
    const out: EventRow[] = [];
    let scanned = 0;
    for await (const seg of this.candidateSegments(filter, typeIds, sourceIds, Math.floor(upper / SEG_SIZE), geoIps)) {
      if (scanned++ >= MAX_SEGMENTS_PER_PAGE) return { events: out, nextCursor: (seg.seg + 1) * SEG_SIZE };
      const lo = seg.seg * SEG_SIZE;
      const rows = await this.select(
        and([sql`e.id between ${lo} and ${Math.min(upper, lo + SEG_SIZE - 1)}`, sql`e.ts between ${seg.minTs} and ${seg.maxTs}`, ...conds]),
        // Rows the check below drops would shorten a limited page: a segment's candidates are read whole then.
        hassh === undefined ? sql`order by e.id desc limit ${limit - out.length}` : sql`order by e.id desc`,
      );
      for (const r of rows) {
        if (hassh !== undefined && hasshOf(r.data) !== hassh) continue;
        out.push(row(r));
        if (out.length === limit) return { events: out, nextCursor: out[out.length - 1]!.id };
      }
    }
    return { events: out, nextCursor: null };
  }

  private matchingSources(f: EventFilter): Promise<number[] | null> {
    return pgSourceIds(this.sql, f);
  }

  private async *candidateSegments(
    f: EventFilter,
    typeIds: number[] | null,
    sourceIds: number[] | null,
    topSeg: number,
    anyOf: string[] | null,
  ): AsyncGenerator<{ seg: number; minTs: number; maxTs: number }> {
    const sql = this.sql;
    const keyed = async (kind: string, values: number[]) =>
      new Set<number>(
        (await sql`select distinct seg::float8 as seg from event_segment_keys where kind = ${kind} and value = any(${sql.array(values, "INT")}) and seg <= ${topSeg}`).map((r: { seg: number }) => r.seg),
      );
    const withType = typeIds === null ? null : await keyed("type", typeIds);
    const withSource = sourceIds === null ? null : await keyed("source", sourceIds);
    const ip = f.srcIp;
    const since = f.since === undefined ? sql`` : sql`and max_ts >= ${f.since}`;
    const until = f.until === undefined ? sql`` : sql`and min_ts < ${f.until}`;
    for (let below = topSeg + 1; ; ) {
      const rows: { seg: number; min_ts: number; max_ts: number; bloom: Uint8Array | null }[] = await sql`
        select seg::float8 as seg, min_ts::float8 as min_ts, max_ts::float8 as max_ts, ${ip === undefined && anyOf === null ? sql`null` : sql`ip_bloom`} as bloom
        from event_segments where seg < ${below} ${since} ${until} order by seg desc limit ${SEGMENT_SLICE}`;
      if (rows.length === 0) return;
      for (const r of rows) {
        if (withType && !withType.has(r.seg)) continue;
        if (withSource && !withSource.has(r.seg)) continue;
        if (ip !== undefined && !bloomHas(r.bloom!, ip)) continue;
        if (anyOf !== null && !anyOf.some((a) => bloomHas(r.bloom!, a))) continue;
        yield { seg: r.seg, minTs: r.min_ts, maxTs: r.max_ts };
      }
      below = rows[rows.length - 1]!.seg;
    }
  }

  stats(windowMs: number, top: number, now = Date.now()): Promise<StatsSummary> {
    return this.statsOf({ from: now - windowMs, to: now }, top, now);
  }

  /** The SQLite store's plan (../event-queries.ts statsOver): counters without a filter, the range's most recent events with one. */
  async statsOver(ask: StatsAsk): Promise<StatsSummary> {
    const now = ask.now ?? Date.now();
    const f = ask.filter ?? {};
    if (!hasSourceFilter(f)) return this.statsOf(ask.range, ask.top, now);
    const { range, top } = ask;
    const sources = (await this.matchingSources(f)) ?? [];
    const sample = new StatsSample();
    const sampled = sources.length === 0 ? 0 : await readRecent((filter, cursor) => this.list(filter, 1000, cursor), { ...f, since: range.from, until: range.to }, (e) => sample.add({ srcIp: e.src_ip, eventType: e.event_type, data: e.data }));
    const lists = await sample.lists(top, (ips) => this.addressGeo(ips));
    const [totalEvents, byType, types] = await Promise.all([this.totalEvents(), sources.length === 0 ? new Map<number, number>() : this.countByType(range, sources), this.sql`select id, name from event_types`]);
    const names = new Map<number, string>(types.map((t: TypeEntry) => [t.id, t.name]));
    const byName = new Map([...byType].map(([id, n]) => [names.get(id) ?? String(id), n]));
    const windowEvents = [...byType.values()].reduce((a, n) => a + n, 0);
    return { totalEvents, windowEvents, topStart: range.from, topEnd: range.to, sampled, top: { ...lists.top, event_type: topOf(byName, top) }, commands: lists.commands, credentials: lists.credentials };
  }

  private async addressGeo(ips: string[]): Promise<Map<string, { country: string | null; asn: number | null }>> {
    if (ips.length === 0) return new Map();
    const rows: { ip: string; country: string | null; asn: number | null }[] = await this.sql`select ip, country, asn from event_addresses where ip = any(${this.sql.array(ips, "TEXT")})`;
    return new Map(rows.map((r) => [r.ip, { country: r.country, asn: r.asn }]));
  }

  private async totalEvents(): Promise<number> {
    const [total] = await this.sql`select coalesce(sum(count), 0)::float8 as n from event_segments`;
    return total.n;
  }

  private segmentsIn(range: StatsRange): Promise<SegmentSpan[]> {
    return pgSegmentsIn(this.sql, range);
  }

  /** Events in a range, exactly (../stats-range.ts countPlan). */
  private async countRange(range: StatsRange): Promise<number> {
    const sql = this.sql;
    const plan = countPlan(await this.segmentsIn(range), range);
    const counted = await Promise.all(
      plan.scan.map(async ([lo, hi]) => {
        const [r] = await sql`select count(*)::float8 as n from events where id between ${lo} and ${hi} and ts >= ${range.from} and ts < ${range.to}`;
        return r.n as number;
      }),
    );
    return counted.reduce((a, n) => a + n, plan.summed);
  }

  /** Events of some sources in a range by type id, exactly (../stats-range.ts SegmentTallies). */
  private async countByType(range: StatsRange, sources: number[]): Promise<Map<number, number>> {
    const sql = this.sql;
    const segs = await this.segmentsIn(range);
    const out = new Map<number, number>();
    if (segs.length === 0) return out;
    const match = new Set(sources);
    const plan = this.tallies.plan(segs, range, match, await pgSegmentSources(sql, segs));
    await pgKeepTallies(sql, this.tallies, plan.missing, segs);
    this.tallies.add(plan.whole, match, out);
    for (const [lo, hi] of plan.edges) {
      const edge: { type: number; n: number }[] = await sql`select type_id as type, count(*)::float8 as n from events
        where id between ${lo} and ${hi} and ts >= ${range.from} and ts < ${range.to} and source_id = any(${sql.array(sources, "INT")}) group by 1`;
      for (const r of edge) out.set(r.type, (out.get(r.type) ?? 0) + r.n);
    }
    return out;
  }

  private async statsOf(range: StatsRange, top: number, now: number): Promise<StatsSummary> {
    const sql = this.sql;
    const { fromBucket, toBucket } = rangeHours(range);
    const [through] = await sql`select value::float8 as v from event_meta where key = ${DAILY_THROUGH}`;
    const d0 = Math.ceil(fromBucket / DAY_HOURS);
    const d1 = Math.max(d0, Math.min(Math.floor(now / HOUR_MS / DAY_HOURS), Math.floor(toBucket / DAY_HOURS), (through?.v ?? -Infinity) + 1));
    const counts = (kind: CountKind) => sql`(
      select key, count from event_counts where kind = ${kind} and bucket >= ${fromBucket} and bucket < ${toBucket} and (bucket < ${d0 * DAY_HOURS} or bucket >= ${d1 * DAY_HOURS})
      union all
      select key, count from event_counts_daily where kind = ${kind} and day >= ${d0} and day < ${d1}) c`;
    const topOf = async (kind: CountKind): Promise<TopEntry[]> =>
      (await sql`select key as value, sum(count)::float8 as count from ${counts(kind)} group by key order by sum(count) desc, key collate "C" limit ${top}`).map((r: TopEntry) => ({ value: r.value, count: r.count }));
    const [totalEvents, windowEvents, lists] = await Promise.all([this.totalEvents(), this.countRange(range), Promise.all(COUNT_KINDS.map(topOf))]);
    const topLists = Object.fromEntries(COUNT_KINDS.map((k, i) => [k, lists[i]])) as Record<CountKind, TopEntry[]>;
    return { totalEvents, windowEvents, topStart: fromBucket * HOUR_MS, topEnd: toBucket * HOUR_MS, sampled: null, top: topLists };
  }
}
