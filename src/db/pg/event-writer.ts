/**
 * The event writer on PostgreSQL: the same batches, ids, per-segment summaries and hourly
 * counters as the SQLite writer (../event-writer.ts), written with PostgreSQL's bulk paths.
 * The events of a batch go in by one COPY (measured against a multi-row INSERT of arrays by
 * `bun run bench pg`; docs/scale-out.md has the figures), everything else of the batch by a
 * few statements, all in one transaction.
 *
 * One writer per database: it gives the ids (as the SQLite writer does).
 */
import type { SQL } from "bun";
import { ints, texts } from "./arrays";
import {
  COUNTED_THROUGH,
  DAILY_KEYS,
  DAILY_THROUGH,
  DAY_HOURS,
  HOUR_MS,
  LAST_ID,
  SEG_SIZE,
  batchBytes,
  batchData,
  type EventBatch,
} from "../event-store";
import { isKexType } from "../hassh";
import { HourlyCounts } from "../hourly-counts";
import { SegmentSummaries, type SegmentDelta, type SegmentKeys } from "../segment-summary";
import { DAY_MS, DAYS_AHEAD, MAX_DAYS_AHEAD, MAX_DAYS_BEHIND, createPartition, dropPartition, partitionDays } from "./partitions";

/** How the events of a batch reach the table: COPY (the default, faster) or INSERT ... SELECT FROM unnest(arrays). */
export type PgWriteMode = "copy" | "insert";

/** Events as the writer stores them: columns, addresses ("" for none) and data texts. */
export interface Rows {
  n: number;
  ts: ArrayLike<number>;
  sourceId: ArrayLike<number>;
  typeId: ArrayLike<number>;
  ips: string[];
  data: string[];
  /** The data as UTF-8 bytes, event i ending at `ends[i]`, when the rows are a batch's own (none left out): spares encoding `data` again. */
  bytes?: { buf: Buffer; ends: ArrayLike<number> };
}

/**
 * Something else a batch adds, beside the events and their segment summaries (sessions,
 * source addresses): worked out from the rows before the transaction, written in it, and
 * remembered by the part only once it committed. Both writers (alone, and a cluster's) run
 * the parts given to them, so a part is written once for every PostgreSQL deployment.
 */
export interface PgBatchPart<D = unknown> {
  prepare(rows: Rows, firstId: number): D;
  write(tx: SQL, delta: D): Promise<void>;
  committed(delta: D): void;
  /** Deletes up to `maxRows` of what the part keeps that is older than the cutoff, once the events are gone; returns how many. */
  retentionStep?(sql: SQL, cutoffMs: number, maxRows: number): Promise<number>;
}

/** What a batch adds beside its events, worked out before its transaction. */
export interface Prepared {
  /** What each of the writer's parts adds, in the order of its parts. */
  parts: unknown[];
  /** The segment summaries (../segment-summary.ts, the step the SQLite writer runs too). */
  segs: SegmentDelta[];
  keys: SegmentKeys;
}

/** COPY's text format: backslash, tab, newline and carriage return are escaped; JSON has few of them. */
const COPY_SPECIAL = /[\\\t\n\r]/;
function copyText(s: string): string {
  return COPY_SPECIAL.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => (c === "\\" ? "\\\\" : c === "\t" ? "\\t" : c === "\n" ? "\\n" : "\\r")) : s;
}

export const meta = (sql: SQL, key: string) => sql`select value::float8 as v from event_meta where key = ${key}`.then((r: { v: number }[]) => r[0]?.v ?? null);

/** An event as read back for counting. */
export interface StoredForCount {
  ts: string;
  type: string;
  ip: string | null;
  data: string;
}

/** Counts stored events. The data is parsed here rather than cast to jsonb: jsonb refuses some text JSON allows (\u0000). */
export function countStored(counts: HourlyCounts, rows: StoredForCount[]): void {
  for (const r of rows) {
    const h = Math.floor(Number(r.ts) / HOUR_MS);
    counts.add("event_type", h, r.type);
    if (r.ip) counts.add("src_ip", h, r.ip);
    let d: Record<string, unknown> = {};
    try {
      d = JSON.parse(r.data);
    } catch {}
    if (typeof d.username === "string") counts.add("username", h, d.username);
    if (typeof d.password === "string") counts.add("password", h, d.password);
    if (typeof d.hassh === "string" && d.hassh !== "" && isKexType(r.type)) counts.add("hassh", h, d.hassh);
  }
}

export class PgEventWriter {
  protected lastId = 0;
  private readonly typeNames = new Map<number, string>();
  private readonly counts = new HourlyCounts();
  protected readonly summaries = new SegmentSummaries();
  protected dailyThrough = 0;
  protected days = new Set<number>();

  protected constructor(
    protected readonly sql: SQL,
    readonly mode: PgWriteMode,
    protected readonly parts: PgBatchPart[] = [],
  ) {}

  /** `sql` is the writer's own client (one connection). */
  static async open(sql: SQL, mode: PgWriteMode = "copy", parts: PgBatchPart[] = []): Promise<PgEventWriter> {
    const w = new PgEventWriter(sql, mode, parts);
    await w.load();
    return w;
  }

  protected async load(): Promise<void> {
    const sql = this.sql;
    const [max] = await sql`select coalesce(max(id), 0)::float8 as m from events`;
    this.lastId = Math.max((await meta(sql, LAST_ID)) ?? 0, Number(max.m));
    this.dailyThrough = (await meta(sql, DAILY_THROUGH)) ?? (await this.startDailyThrough());
    for (const t of await sql`select id, name from event_types`) this.typeNames.set(t.id, t.name);
    const lastSeg = Math.floor(this.lastId / SEG_SIZE);
    const [stored] = await sql`select ip_bloom from event_segments where seg = ${lastSeg}`;
    if (stored) this.summaries.useBloom(lastSeg, new Uint8Array(stored.ip_bloom));
    this.days = await partitionDays(sql);
    await this.partitionsAhead();
    await this.recount();
  }

  /** Today's partition and the next DAYS_AHEAD days'. */
  async partitionsAhead(now = Date.now()): Promise<void> {
    const today = Math.floor(now / DAY_MS);
    for (let d = today; d <= today + DAYS_AHEAD; d++) await this.ensureDay(d);
  }

  private async ensureDay(day: number): Promise<void> {
    if (this.days.has(day)) return;
    await createPartition(this.sql, day);
    this.days.add(day);
  }

  /** Commits one batch; returns the id of its first event (the others follow in order). */
  async write(b: EventBatch): Promise<number> {
    const firstId = this.lastId + 1;
    const rows: Rows = { n: b.n, ts: b.ts, sourceId: b.sourceId, typeId: b.typeId, ips: b.srcIps.split("\n"), data: batchData(b), bytes: { buf: batchBytes(b), ends: b.dataEnds } };
    await this.ensurePartitions(b.ts, b.n);
    const prep = this.prepare(rows, firstId);
    const metaKeys = [...b.spools.map((s) => s[0]), LAST_ID];
    const metaValues = [...b.spools.map((s) => s[1]), firstId + b.n - 1];
    await this.sql.begin(async (tx) => {
      if (b.newSources.length) {
        await tx`insert into event_sources (id, node_id, pot_id, pot_type)
          select * from unnest(${ints(b.newSources.map((s) => s.id))}::int4[], ${texts(b.newSources.map((s) => s.nodeId))}::text[],
                               ${texts(b.newSources.map((s) => s.potId))}::text[], ${texts(b.newSources.map((s) => s.potType))}::text[])
          on conflict do nothing`;
      }
      if (b.newTypes.length) {
        await tx`insert into event_types (id, name)
          select * from unnest(${ints(b.newTypes.map((t) => t.id))}::int4[], ${texts(b.newTypes.map((t) => t.name))}::text[])
          on conflict do nothing`;
      }
      // In the same transaction as the events: a position is stored exactly when its events are.
      await tx`insert into event_meta (key, value) select * from unnest(${texts(metaKeys)}::text[], ${ints(metaValues)}::int8[])
        on conflict (key) do update set value = excluded.value`;
      await this.insertRows(tx, rows, firstId, prep);
    });
    this.committed(prep, firstId + b.n - 1);
    for (const t of b.newTypes) this.typeNames.set(t.id, t.name);
    this.counts.countBatch(b, rows.ips, (id) => this.typeNames.get(id) ?? String(id));
    return firstId;
  }

  /** Partitions first (DDL, in transactions of their own): the days of these times near enough to now; any other goes to the default partition. */
  protected async ensurePartitions(ts: ArrayLike<number>, n: number): Promise<void> {
    const today = Math.floor(Date.now() / DAY_MS);
    for (let i = 0, last = -1; i < n; i++) {
      const d = Math.floor(ts[i]! / DAY_MS);
      if (d !== last && d <= today + MAX_DAYS_AHEAD && d >= today - MAX_DAYS_BEHIND) await this.ensureDay(d);
      last = d;
    }
  }

  /** The segment summaries, new segment keys and parts' deltas of rows that get ids from `firstId` on. */
  protected prepare(r: Rows, firstId: number): Prepared {
    const segs = this.summaries.summarize(r.n, firstId, r.ts, r.typeId, r.sourceId, r.ips);
    return { parts: this.parts.map((part) => part.prepare(r, firstId)), segs, keys: this.summaries.newKeys(segs) };
  }

  /** The events, their segment summaries and segment keys, in the caller's transaction. */
  protected async insertRows(tx: SQL, r: Rows, firstId: number, p: Prepared): Promise<void> {
    if (this.mode === "copy") await this.copyEvents(tx, r, firstId);
    else await this.insertEvents(tx, r, firstId);
    for (const s of p.segs) {
      await tx`insert into event_segments (seg, min_ts, max_ts, count, ip_bloom) values (${s.seg}, ${s.minTs}, ${s.maxTs}, ${s.count}, ${Buffer.from(s.bloom)})
        on conflict (seg) do update set min_ts = least(event_segments.min_ts, excluded.min_ts), max_ts = greatest(event_segments.max_ts, excluded.max_ts),
          count = event_segments.count + excluded.count, ip_bloom = excluded.ip_bloom`;
    }
    if (p.keys.kinds.length) {
      await tx`insert into event_segment_keys (kind, value, seg)
        select * from unnest(${texts(p.keys.kinds)}::text[], ${ints(p.keys.values)}::int4[], ${ints(p.keys.segs)}::int8[])
        on conflict do nothing`;
    }
    for (let i = 0; i < this.parts.length; i++) await this.parts[i]!.write(tx, p.parts[i]);
  }

  /** After the commit of prepared rows: what this writer remembers of them. */
  protected committed(p: Prepared, lastId: number): void {
    for (let i = 0; i < this.parts.length; i++) this.parts[i]!.committed(p.parts[i]);
    this.summaries.committed(p.keys);
    this.lastId = lastId;
  }

  private async copyEvents(tx: SQL, r: Rows, firstId: number): Promise<void> {
    let text = "";
    for (let i = 0; i < r.n; i++) {
      const ip = r.ips[i];
      text += `${firstId + i}\t${r.ts[i]}\t${r.sourceId[i]}\t${r.typeId[i]}\t${ip ? copyText(ip) : "\\N"}\t${copyText(r.data[i]!)}\n`;
    }
    const w = tx`copy events (id, ts, source_id, type_id, src_ip, data) from stdin`.writable().getWriter();
    await w.write(text);
    await w.close();
  }

  private async insertEvents(tx: SQL, r: Rows, firstId: number): Promise<void> {
    const ids = new Array<number>(r.n);
    for (let i = 0; i < r.n; i++) ids[i] = firstId + i;
    await tx`insert into events (id, ts, source_id, type_id, src_ip, data)
      select * from unnest(${ints(ids)}::int8[], ${ints(r.ts)}::int8[], ${ints(r.sourceId)}::int4[],
                           ${ints(r.typeId)}::int4[], ${texts(r.ips.map((ip) => ip || null))}::text[], ${texts(r.data)}::text[])`;
  }

  get countsPending(): boolean {
    return !this.counts.empty;
  }

  /** Writes the in-memory counts and moves the watermark to the last committed event. */
  async flushCounts(): Promise<void> {
    const through = this.lastId;
    await this.sql.begin(async (tx) => {
      await this.upsertCounts(tx, this.counts, this.dailyThrough);
      await tx`insert into event_meta (key, value) values (${COUNTED_THROUGH}, ${through}) on conflict (key) do update set value = excluded.value`;
    });
    this.counts.clear();
    await this.rollUpDay();
  }

  /** Adds counts to the hourly counters, and to the daily ones for days summed up already (through `dailyThrough`). */
  protected async upsertCounts(tx: SQL, counts: HourlyCounts, dailyThrough: number): Promise<void> {
    // One row per key: an INSERT ... ON CONFLICT may not meet the same key twice.
    const hourly = new Map<string, [string, number, string, number]>();
    const daily = new Map<string, [string, number, string, number]>();
    const add = (m: typeof hourly, kind: string, at: number, key: string, n: number) => {
      const k = `${kind}\u0000${at}\u0000${key}`;
      const e = m.get(k);
      if (e) e[3] += n;
      else m.set(k, [kind, at, key, n]);
    };
    for (const [kind, bucket, key, count] of counts.entries()) {
      add(hourly, kind, bucket, key, count);
      const day = Math.floor(bucket / DAY_HOURS);
      if (day <= dailyThrough) add(daily, kind, day, key, count);
    }
    const cols = (m: typeof hourly) => {
      const v = [...m.values()];
      return [v.map((r) => r[0]), v.map((r) => r[1]), v.map((r) => r[2]), v.map((r) => r[3])] as const;
    };
    if (hourly.size) {
      const [k, at, key, n] = cols(hourly);
      await tx`insert into event_counts (kind, bucket, key, count)
        select * from unnest(${texts(k)}::text[], ${ints(at)}::int4[], ${texts(key)}::text[], ${ints(n)}::int8[])
        on conflict (kind, bucket, key) do update set count = event_counts.count + excluded.count`;
    }
    if (daily.size) {
      const [k, at, key, n] = cols(daily);
      await tx`insert into event_counts_daily (kind, day, key, count)
        select * from unnest(${texts(k)}::text[], ${ints(at)}::int4[], ${texts(key)}::text[], ${ints(n)}::int8[])
        on conflict (kind, day, key) do update set count = event_counts_daily.count + excluded.count`;
    }
  }

  /** Sums up the next finished day into event_counts_daily (as the SQLite writer does). */
  async rollUpDay(now = Date.now()): Promise<boolean> {
    const day = this.dailyThrough + 1;
    if (day >= Math.floor(now / HOUR_MS / DAY_HOURS)) return false;
    await this.sql.begin((tx) => this.rollUpIn(tx, day));
    this.dailyThrough = day;
    return true;
  }

  /** Sums up one day into event_counts_daily and moves the meta row, in the caller's transaction. */
  protected async rollUpIn(tx: SQL, day: number): Promise<void> {
    const from = day * DAY_HOURS;
    await tx`
      insert into event_counts_daily (kind, day, key, count)
      select kind, ${day}, key, total from (
        select kind, key, sum(count) as total,
               row_number() over (partition by kind order by sum(count) desc, key) as rank
        from event_counts
        where bucket >= ${from} and bucket < ${from + DAY_HOURS}
        group by kind, key) r
      where rank <= ${DAILY_KEYS}
      on conflict (kind, day, key) do update set count = event_counts_daily.count + excluded.count`;
    await tx`insert into event_meta (key, value) values (${DAILY_THROUGH}, ${day}) on conflict (key) do update set value = excluded.value`;
  }

  private async startDailyThrough(): Promise<number> {
    const [r] = await this.sql`select min(bucket) as b from event_counts`;
    const day = (r.b === null ? Math.floor(Date.now() / HOUR_MS / DAY_HOURS) : Math.floor(r.b / DAY_HOURS)) - 1;
    await this.sql`insert into event_meta (key, value) values (${DAILY_THROUGH}, ${day}) on conflict (key) do update set value = excluded.value`;
    return day;
  }

  /** Counts the events a crash left uncounted (those above the watermark). */
  protected async recount(): Promise<void> {
    const through = (await meta(this.sql, COUNTED_THROUGH)) ?? 0;
    if (through >= this.lastId) return;
    const rows: StoredForCount[] = await this.sql`
      select e.ts, t.name as type, e.src_ip as ip, e.data from events e join event_types t on t.id = e.type_id where e.id > ${through}`;
    countStored(this.counts, rows);
    await this.flushCounts();
  }

  /**
   * Retention by whole partitions: drops one day older than the cutoff per call (returns how
   * many events it held), then deletes old events from the default partition, then the
   * summaries and counters only they fed. Events are kept up to a day longer than the
   * retention period (a day's partition goes when all of it is past the cutoff).
   */
  async retentionStep(cutoffMs: number, maxRows: number): Promise<number> {
    await this.partitionsAhead();
    const cutoffDay = Math.floor(cutoffMs / DAY_MS);
    const old = [...this.days].filter((d) => d < cutoffDay).sort((a, b) => a - b)[0];
    if (old !== undefined) {
      const n = await dropPartition(this.sql, old);
      this.days.delete(old);
      await this.fixSegments((old + 1) * DAY_MS);
      return Math.max(n, 1);
    }
    const [gone] = await this.sql`
      with doomed as (select ctid from events_default where ts < ${cutoffMs} limit ${maxRows})
      delete from events_default where ctid in (select ctid from doomed) returning 1`.then((r: unknown[]) => [r.length]);
    if (gone! > 0) {
      await this.fixSegments(cutoffMs);
      return gone!;
    }
    for (const part of this.parts) {
      const n = (await part.retentionStep?.(this.sql, cutoffMs, maxRows)) ?? 0;
      if (n > 0) return n;
    }
    const bucket = Math.floor(cutoffMs / HOUR_MS);
    await this.sql`delete from event_counts where bucket < ${bucket}`;
    await this.sql`delete from event_counts_daily where day < ${Math.floor(bucket / DAY_HOURS)}`;
    return 0;
  }

  /** Before retention rewrites segment summaries: nothing here (one writer); the cluster's writers serialize. */
  protected async lockForFix(_tx: SQL): Promise<void> {}

  /** Recounts the segments that had events before `beforeMs`, forgetting those left empty. */
  protected async fixSegments(beforeMs: number): Promise<void> {
    await this.sql.begin(async (tx) => {
      await this.lockForFix(tx);
      const segs: { seg: string }[] = await tx`select seg from event_segments where min_ts < ${beforeMs}`;
      for (const { seg } of segs) {
        const lo = Number(seg) * SEG_SIZE;
        const [left] = await tx`select count(*)::int as n, min(ts)::float8 as lo, max(ts)::float8 as hi from events where id between ${lo} and ${lo + SEG_SIZE - 1}`;
        if (left.n === 0) {
          await tx`delete from event_segments where seg = ${seg}`;
          await tx`delete from event_segment_keys where seg = ${seg}`;
        } else await tx`update event_segments set count = ${left.n}, min_ts = ${left.lo}, max_ts = ${left.hi} where seg = ${seg}`;
      }
    });
    this.summaries.forgetKeys();
  }
}
