/**
 * The stats counters of the event tables (SQLite): what each batch adds is counted in memory
 * (HourlyCounts) and written in bulk every `stats_flush_ms`, hourly into event_counts and,
 * for days already summed up, daily into event_counts_daily. Runs beside the event writer
 * (event-writer.ts), in its thread and on its connection; the stats queries read the tables.
 */
import { eq, lt, sql } from "drizzle-orm";
import type { Geo } from "../geo";
import { geoKeys } from "./address-book";
import type { AddressWriter } from "./address-store";
import { isKexType } from "./hassh";
import { COUNTED_THROUGH, DAILY_KEYS, DAILY_THROUGH, DAY_HOURS, HOUR_MS, IMMEDIATE, metaUpsert, readDailyThrough, type EventBatch } from "./event-store";
import { HourlyCounts } from "./hourly-counts";
import type { Db } from "./index";
import { ipv4Text } from "../net/ipv4";
import { rowWriter, slot } from "./positional";
import { eventCounts, eventCountsDaily, eventMeta, events, eventTypes } from "./schema";

/**
 * Counter rows per upsert statement. One statement per key (through Drizzle) took 25-45 ms for
 * a flush of ~5,000 keys, 9-13 ms this way (measured): the batches wait behind a flush, and the
 * live feed showed it as a latency spike every `stats_flush_ms`.
 */
const ROWS_PER_UPSERT = 32;

/** The placeholders of `rows` counter rows: kind, hour bucket or day, key, count. */
function counterRows(rows: number) {
  const ph = (i: number) => sql`${slot(i)}`;
  return Array.from({ length: rows }, (_, r) => ({ kind: ph(r * 4), time: ph(r * 4 + 1), key: ph(r * 4 + 2), count: ph(r * 4 + 3) }));
}

export class CountWriter {
  private readonly counts = new HourlyCounts();
  private readonly upsertCount;
  private readonly upsertDaily;
  private readonly setMeta;
  /** Days summed up in event_counts_daily: counts that arrive later for them go there too. */
  private dailyThrough: number;

  constructor(
    private readonly db: Db,
    /** Enrichment of the counted addresses; absent in tests of the store alone. */
    private readonly addresses: AddressWriter | null,
  ) {
    this.upsertCount = rowWriter(
      db,
      (rows) =>
        db
          .insert(eventCounts)
          .values(counterRows(rows).map((r) => ({ kind: r.kind, bucket: r.time, key: r.key, count: r.count })))
          .onConflictDoUpdate({ target: [eventCounts.kind, eventCounts.bucket, eventCounts.key], set: { count: sql`${eventCounts.count} + excluded.count` } }),
      4,
      ROWS_PER_UPSERT,
    );
    this.upsertDaily = rowWriter(
      db,
      (rows) =>
        db
          .insert(eventCountsDaily)
          .values(counterRows(rows).map((r) => ({ kind: r.kind, day: r.time, key: r.key, count: r.count })))
          .onConflictDoUpdate({ target: [eventCountsDaily.kind, eventCountsDaily.day, eventCountsDaily.key], set: { count: sql`${eventCountsDaily.count} + excluded.count` } }),
      4,
      ROWS_PER_UPSERT,
    );
    this.setMeta = metaUpsert(db);
    this.dailyThrough = readDailyThrough(db) ?? this.startDailyThrough();
  }

  /** Counts a committed batch (its addresses split out of `b.srcIps` already). */
  countBatch(b: EventBatch, ips: string[], typeName: (id: number) => string): void {
    this.counts.countBatch(b, ips, typeName);
  }

  /** True when counts wait in memory for `flush`. */
  get pending(): boolean {
    return !this.counts.empty;
  }

  /** Writes the in-memory counts, moving the watermark to `through` (the last event they include). */
  flush(through: number): void {
    if (this.addresses) this.countGeo(this.addresses);
    let committed = false;
    try {
      this.db.transaction(() => {
        this.addresses?.write();
        const rows = [...this.counts.entries()];
        this.upsertCount(rows);
        // Hours of days already summed up count there too.
        const dayOf = (bucket: number) => Math.floor(bucket / DAY_HOURS);
        this.upsertDaily(rows.filter(([, bucket]) => dayOf(bucket) <= this.dailyThrough).map(([kind, bucket, key, count]) => [kind, dayOf(bucket), key, count]));
        this.setMeta.run({ key: COUNTED_THROUGH, value: through });
        committed = true;
      }, IMMEDIATE);
    } finally {
      this.addresses?.done(committed);
      // Counted again from the addresses at the next attempt.
      if (!committed) for (const k of ["country", "asn"] as const) this.counts.byKind.delete(k);
    }
    this.counts.clear();
    this.rollUpDay();
  }

  /** Country and ASN counts from the address counts about to be written: per distinct address, not per event. */
  private countGeo(addresses: AddressWriter): void {
    const add = (bucket: number, g: Geo, n: number) => geoKeys(g, (kind, key) => this.counts.add(kind, bucket, key, n));
    for (const [bucket, keys] of this.counts.ipv4) for (const [v4, n] of keys) add(bucket, addresses.seeV4(v4, ipv4Text, bucket * HOUR_MS), n);
    for (const [bucket, keys] of this.counts.byKind.get("src_ip") ?? []) for (const [ip, n] of keys) add(bucket, addresses.see(ip, bucket * HOUR_MS), n);
  }

  /**
   * Sums up the next finished day (at most one per call, so a database with a long backlog
   * catches up a day per flush rather than stalling the writer): each kind's DAILY_KEYS most
   * frequent keys of the day's hourly counters go to event_counts_daily.
   */
  rollUpDay(now = Date.now()): boolean {
    const day = this.dailyThrough + 1;
    if (day >= Math.floor(now / HOUR_MS / DAY_HOURS)) return false;
    const from = day * DAY_HOURS;
    this.db.transaction(() => {
      this.db.run(sql`
        insert into ${eventCountsDaily} (kind, day, key, count)
        select kind, ${day}, key, total from (
          select kind, key, sum(count) as total,
                 row_number() over (partition by kind order by sum(count) desc, key) as rank
          from ${eventCounts}
          where bucket >= ${from} and bucket < ${from + DAY_HOURS}
          group by kind, key)
        where rank <= ${DAILY_KEYS}
        on conflict do update set count = count + excluded.count`);
      this.setMeta.run({ key: DAILY_THROUGH, value: day });
    }, IMMEDIATE);
    this.dailyThrough = day;
    return true;
  }

  /** A database without daily counts yet: its oldest hourly counters are the first day to sum up. */
  private startDailyThrough(): number {
    const oldest = this.db.select({ bucket: sql<number | null>`min(${eventCounts.bucket})` }).from(eventCounts).get()?.bucket;
    const day = (oldest === null || oldest === undefined ? Math.floor(Date.now() / HOUR_MS / DAY_HOURS) : Math.floor(oldest / DAY_HOURS)) - 1;
    this.setMeta.run({ key: DAILY_THROUGH, value: day });
    return day;
  }

  /** Counts the events a crash left uncounted (those above the watermark, up to `lastId`). */
  recount(lastId: number): void {
    const through = this.db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, COUNTED_THROUGH)).get()?.value ?? 0;
    if (through >= lastId) return;
    const textField = (path: string) => sql<string | null>`case when json_type(${events.data}, ${path}) = 'text' then json_extract(${events.data}, ${path}) end`;
    const rows = this.db
      .select({ ts: events.ts, type: eventTypes.name, ip: events.srcIp, user: textField("$.username"), pass: textField("$.password"), hassh: textField("$.hassh") })
      .from(events)
      .innerJoin(eventTypes, eq(eventTypes.id, events.typeId))
      .where(sql`${events.id} > ${through}`)
      .all();
    for (const r of rows) {
      const h = Math.floor(r.ts / HOUR_MS);
      this.counts.add("event_type", h, r.type);
      if (r.ip) this.counts.add("src_ip", h, r.ip);
      if (r.user !== null) this.counts.add("username", h, r.user);
      if (r.pass !== null) this.counts.add("password", h, r.pass);
      if (r.hassh && isKexType(r.type)) this.counts.add("hassh", h, r.hassh);
    }
    this.flush(lastId);
  }

  /** Deletes the counters of hours (and days) before `cutoffMs`: retention's last step. */
  deleteBefore(cutoffMs: number): void {
    const bucket = Math.floor(cutoffMs / HOUR_MS);
    this.db.delete(eventCounts).where(lt(eventCounts.bucket, bucket)).run();
    this.db.delete(eventCountsDaily).where(lt(eventCountsDaily.day, Math.floor(bucket / DAY_HOURS))).run();
  }
}
