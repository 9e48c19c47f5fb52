/**
 * All SQL of the event pipeline: the batched writer (one transaction per batch, Drizzle
 * prepared statements with `sql.placeholder`) and the queries behind the events and stats
 * endpoints. See the `events` table in schema.ts for why the storage looks the way it does.
 *
 * The writer runs in the ingest worker thread (or inline for `:memory:` databases); the
 * queries run on the main thread's connection, reading committed data beside it (WAL).
 */
import { and, asc, desc, eq, gte, inArray, lt, lte, or, sql, type SQL } from "drizzle-orm";
import { unionAll } from "drizzle-orm/sqlite-core";
import { parseWithIds } from "../protocol/json";
import type { Geo } from "../geo";
import { AddressWriter, addressesWhere, type GeoResolver } from "./address-store";
import type { Db } from "./index";
import { kindOfType, type Kind } from "./session-fields";
import { positional } from "./positional";
import { SessionTracker } from "./session-tracker";
import { eventAddresses, eventCounts, eventCountsDaily, eventMeta, events, eventSegmentKeys, eventSegments, eventSources, eventTypes } from "./schema";
import type { EventReader } from "./stores";

/** Consecutive ids per segment, the unit the per-segment summaries describe. */
export const SEG_SIZE = 4096;
export const HOUR_MS = 3_600_000;
/** The counters' watermark: every event with a smaller or equal id is counted in event_counts. */
export const COUNTED_THROUGH = "counted_through_id";
/** The last event id ever given: retention may delete every event, and ids must never come back. */
export const LAST_ID = "last_event_id";
/** Days (since the epoch, UTC) up to this one are summed up in event_counts_daily. */
export const DAILY_THROUGH = "counts_daily_through";
export const DAY_HOURS = 24;
/** Keys kept per kind and day in event_counts_daily (the top lists show a few dozen at most). */
export const DAILY_KEYS = 5000;
/** Take the write lock at BEGIN: a reader upgrading mid-transaction is what deadlocks SQLite writers. */
const IMMEDIATE = { behavior: "immediate" } as const;

/** `country` and `asn` are counted from the source addresses when the counters are written (address-store.ts). */
export const COUNT_KINDS = ["src_ip", "username", "password", "event_type", "country", "asn"] as const;
export type CountKind = (typeof COUNT_KINDS)[number];

// Type aliases, not interfaces: Drizzle's placeholder values must be index-signature compatible.
export type SourceEntry = { id: number; nodeId: string | null; potId: string | null; potType: string | null };
export type TypeEntry = { id: number; name: string };

/**
 * A batch as it crosses from the parsing thread to the writer: columns, not objects, so the
 * copy between threads is a few typed arrays and two strings instead of thousands of objects.
 * JSON text never contains a raw newline, and addresses are checked to contain none, so "\n"
 * joins them safely.
 */
export interface EventBatch {
  n: number;
  ts: Float64Array;
  sourceId: Int32Array;
  typeId: Int32Array;
  /** n addresses joined by "\n"; "" where an event has none. */
  srcIps: string;
  /**
   * The events' data: UTF-8 JSON objects one after another, event i ending at `dataEnds[i]`.
   * Bytes, not a string: the pipeline copies most of them straight from the socket's chunks,
   * and an ArrayBuffer moves to the writer's thread without a copy (transferred).
   */
  data: ArrayBuffer;
  dataEnds: Int32Array;
  /**
   * Username and password counts of the batch for the stats, counted by the receiving thread
   * (which has the parsed events): JSON of [kind, hour bucket, [[key, count], ...]]. One string,
   * because an array of strings costs ~0.1 µs per element to pass between threads.
   */
  credCounts: string;
  newSources: SourceEntry[];
  newTypes: TypeEntry[];
  /** Node spool positions this batch commits (`spool:<node>:<spool>`, position). */
  spools: [string, number][];
}

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
 */
function eventRows(rows: number) {
  const ph = (i: number) => sql`${sql.placeholder(String(i))}`;
  return Array.from({ length: rows }, (_, r) => {
    const at = r * EVENT_COLUMNS;
    return { id: ph(at), ts: ph(at + 1), sourceId: ph(at + 2), typeId: ph(at + 3), srcIp: ph(at + 4), data: ph(at + 5) };
  });
}

function readDailyThrough(db: Db): number | null {
  return db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, DAILY_THROUGH)).get()?.value ?? null;
}

/** The data of each event of a batch, as text. */
export function batchData(b: Pick<EventBatch, "n" | "data" | "dataEnds">): string[] {
  const bytes = Buffer.from(b.data);
  // Decoded once: while it is ASCII (the text as long as the bytes), offsets are indices.
  const all = bytes.toString("utf8");
  const ascii = all.length === bytes.length;
  const out: string[] = new Array(b.n);
  for (let i = 0, from = 0; i < b.n; i++) {
    const to = b.dataEnds[i]!;
    out[i] = ascii ? all.slice(from, to) : bytes.toString("utf8", from, to);
    from = to;
  }
  return out;
}

/**
 * The stats need top-N lists, and attack traffic has a long tail of addresses and passwords
 * seen once (in the bench's realistic mix nearly every event of a batch has a new address).
 * Counting every key exactly costs the writer ~1 µs per event in a map that outgrows the CPU
 * caches, plus an upsert per distinct key per flush. So each (kind, hour) keeps at most
 * TRACKED_KEYS_HIGH keys between flushes; past that, the keys seen least are dropped (those
 * seen once first) down to TRACKED_KEYS. Counts are exact for every key while fewer keys than
 * that occur in a flush interval (always, at ordinary rates); under a flood, frequent keys
 * keep (nearly) exact counts and the rarest are not counted. Event type counts are exact.
 */
const TRACKED_KEYS = 5000;
const TRACKED_KEYS_HIGH = 10_000;

function prune<K>(keys: Map<K, number>): void {
  for (let floor = 1; keys.size > TRACKED_KEYS; floor++) {
    for (const [k, n] of keys) if (n <= floor) keys.delete(k);
  }
}

export class HourlyCounts {
  readonly byKind = new Map<CountKind, Map<number, Map<string, number>>>();
  /**
   * Source addresses that are IPv4 dotted quads, by hour, as 32-bit numbers: a number is a
   * cheaper Map key than a string sliced from a batch (measured: 0.2 µs per event less).
   */
  readonly ipv4 = new Map<number, Map<number, number>>();

  /** The counts of one kind in one hour, to add to with `bump` in a hot loop. */
  keys(kind: CountKind, bucket: number): Map<string, number> {
    let buckets = this.byKind.get(kind);
    if (!buckets) this.byKind.set(kind, (buckets = new Map()));
    let keys = buckets.get(bucket);
    if (!keys) buckets.set(bucket, (keys = new Map()));
    return keys;
  }

  ipv4Keys(bucket: number): Map<number, number> {
    let keys = this.ipv4.get(bucket);
    if (!keys) this.ipv4.set(bucket, (keys = new Map()));
    return keys;
  }

  add(kind: CountKind, bucket: number, key: string, n = 1): void {
    bump(this.keys(kind, bucket), key, n, kind !== "event_type");
  }

  /** Every count: kind, hour bucket, key, count. */
  *entries(): Generator<[CountKind, number, string, number]> {
    for (const [kind, buckets] of this.byKind) for (const [bucket, keys] of buckets) for (const [key, count] of keys) yield [kind, bucket, key, count];
    for (const [bucket, keys] of this.ipv4) for (const [v4, count] of keys) yield ["src_ip", bucket, ipv4Text(v4), count];
  }

  get empty(): boolean {
    return this.byKind.size === 0 && this.ipv4.size === 0;
  }

  clear(): void {
    this.byKind.clear();
    this.ipv4.clear();
  }
}

export function bump<K>(keys: Map<K, number>, key: K, n: number, bounded: boolean): void {
  const before = keys.get(key);
  if (before !== undefined) keys.set(key, before + n);
  else {
    keys.set(key, n);
    if (bounded && keys.size > TRACKED_KEYS_HIGH) prune(keys);
  }
}

/** An IPv4 dotted quad as a 32-bit number; -1 for anything else (leading zeros too: the text must come back the same). */
export function ipv4Of(s: string): number {
  const n = s.length;
  if (n < 7 || n > 15) return -1;
  let v = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || dots === 3) return -1;
      v = v * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return -1;
      part = part * 10 + (c - 48);
      if (++digits > 3 || part > 255) return -1;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? v * 256 + part : -1;
}

export function ipv4Text(v: number): string {
  return `${Math.floor(v / 16777216)}.${Math.floor(v / 65536) & 255}.${Math.floor(v / 256) & 255}.${v & 255}`;
}

/**
 * A Bloom filter of the source addresses of one segment: 8 KiB, 7 probes. A segment holds up
 * to 4096 events, in realistic traffic ~3600 distinct addresses, so about 18 bits per
 * address: ~0.03% false positives, i.e. a lookup for a rare address scans well under one
 * segment in vain per 2000. Hashing an address costs ~0.1 µs; an index entry ~1 µs.
 */
export const BLOOM_BYTES = 8192;
const BLOOM_MASK = BLOOM_BYTES * 8 - 1;
const BLOOM_PROBES = 7;

// Double hashing: FNV-1a for the first hash, a murmur3 finaliser of it for the step. Written
// out in both functions: a callback per probe cost more than the hashing.
function bloomH1(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

function bloomH2(h1: number): number {
  let h = h1 ^ (h1 >>> 16);
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return Math.imul(h, 0xc2b2ae35) | 1;
}

export function bloomAdd(bits: Uint8Array, s: string): void {
  const h1 = bloomH1(s);
  const h2 = bloomH2(h1);
  for (let k = 0; k < BLOOM_PROBES; k++) {
    const b = (h1 + Math.imul(k, h2)) & BLOOM_MASK;
    bits[b >>> 3]! |= 1 << (b & 7);
  }
}

export function bloomHas(bits: Uint8Array, s: string): boolean {
  const h1 = bloomH1(s);
  const h2 = bloomH2(h1);
  for (let k = 0; k < BLOOM_PROBES; k++) {
    const b = (h1 + Math.imul(k, h2)) & BLOOM_MASK;
    if ((bits[b >>> 3]! & (1 << (b & 7))) === 0) return false;
  }
  return true;
}

interface SegmentDelta {
  seg: number;
  minTs: number;
  maxTs: number;
  count: number;
  bloom: Uint8Array;
  types: Set<number>;
  sources: Set<number>;
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
  private readonly counts = new HourlyCounts();
  /** Segment keys already written ("seg/kind/value"), so each batch inserts only new ones. */
  private readonly keysWritten = new Set<string>();
  /** The newest segment's address filter, kept whole in memory and rewritten per batch. */
  private bloom: { seg: number; bits: Uint8Array } | null = null;

  /** Inserts ROWS_PER_INSERT events; `insertEvent` one (the rest of a batch). */
  private readonly insertEvents;
  private readonly insertEvent;
  private readonly insertSource;
  private readonly insertType;
  private readonly upsertSegment;
  private readonly insertSegmentKey;
  private readonly upsertCount;
  private readonly upsertDaily;
  /** Days summed up in event_counts_daily: counts that arrive later for them go there too. */
  private dailyThrough: number;
  private readonly setMeta;
  /** The values of `insertEvents` (and of `insertEvent`), in placeholder order, reused for every statement. */
  private readonly rowValues: unknown[] = new Array(ROWS_PER_INSERT * EVENT_COLUMNS);
  private readonly oneValues: unknown[] = new Array(EVENT_COLUMNS);

  /** Enrichment of the counted addresses; absent in tests of the store alone. */
  private readonly addresses: AddressWriter | null;

  constructor(
    private readonly db: Db,
    geo?: GeoResolver,
  ) {
    this.addresses = geo ? new AddressWriter(db, geo) : null;
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
    this.upsertCount = db
      .insert(eventCounts)
      .values({ kind: ph("kind"), bucket: ph("bucket"), key: ph("key"), count: ph("count") })
      .onConflictDoUpdate({ target: [eventCounts.kind, eventCounts.bucket, eventCounts.key], set: { count: sql`${eventCounts.count} + excluded.count` } })
      .prepare();
    this.upsertDaily = db
      .insert(eventCountsDaily)
      .values({ kind: ph("kind"), day: ph("day"), key: ph("key"), count: ph("count") })
      .onConflictDoUpdate({ target: [eventCountsDaily.kind, eventCountsDaily.day, eventCountsDaily.key], set: { count: sql`${eventCountsDaily.count} + excluded.count` } })
      .prepare();
    this.setMeta = db
      .insert(eventMeta)
      .values({ key: ph("key"), value: ph("value") })
      .onConflictDoUpdate({ target: eventMeta.key, set: { value: sql`excluded.value` } })
      .prepare();

    const lastGiven = db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, LAST_ID)).get()?.value ?? 0;
    this.lastId = Math.max(lastGiven, db.select({ max: sql<number | null>`max(${events.id})` }).from(events).get()?.max ?? 0);
    this.dailyThrough = readDailyThrough(db) ?? this.startDailyThrough();
    for (const t of db.select().from(eventTypes).all()) this.addType(t);
    this.sessions = new SessionTracker(db);
    const lastSeg = Math.floor(this.lastId / SEG_SIZE);
    const stored = db.select({ bits: eventSegments.ipBloom }).from(eventSegments).where(eq(eventSegments.seg, lastSeg)).get();
    if (stored) this.bloom = { seg: lastSeg, bits: new Uint8Array(stored.bits) };
    this.recount();
  }

  /** Commits one batch; returns the id of its first event (the others follow in order). */
  write(b: EventBatch): number {
    const firstId = this.lastId + 1;
    const ips = b.srcIps.split("\n");
    const data = batchData(b);
    const rows = this.rowValues;
    const segs: SegmentDelta[] = [];
    let cur: SegmentDelta | null = null;
    let newKeys: string[] = [];
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
      for (let i = 0; i < b.n; i++, id++) {
        const ts = b.ts[i]!;
        const ip = ips[i]!;
        const typeId = b.typeId[i]!;
        const sourceId = b.sourceId[i]!;
        const rest = i >= whole;
        const v = rest ? this.oneValues : rows;
        const at = rest ? 0 : (i % ROWS_PER_INSERT) * EVENT_COLUMNS;
        v[at] = id;
        v[at + 1] = ts;
        v[at + 2] = sourceId;
        v[at + 3] = typeId;
        v[at + 4] = ip || null;
        v[at + 5] = data[i]!;
        if (rest) this.insertEvent(v);
        else if (at === (ROWS_PER_INSERT - 1) * EVENT_COLUMNS) this.insertEvents(v);
        const seg = Math.floor(id / SEG_SIZE);
        if (cur === null || cur.seg !== seg) segs.push((cur = { seg, minTs: ts, maxTs: ts, count: 0, bloom: this.bloomOf(seg), types: new Set(), sources: new Set() }));
        if (ts < cur.minTs) cur.minTs = ts;
        if (ts > cur.maxTs) cur.maxTs = ts;
        cur.count++;
        cur.types.add(typeId);
        cur.sources.add(sourceId);
        if (ip) bloomAdd(cur.bloom, ip);
      }
      newKeys = [];
      for (const s of segs) {
        this.upsertSegment.run({ seg: s.seg, minTs: s.minTs, maxTs: s.maxTs, count: s.count, ipBloom: s.bloom });
        this.writeKeys(s.seg, "type", s.types, newKeys);
        this.writeKeys(s.seg, "source", s.sources, newKeys);
      }
      this.sessions.write(b.n, firstId, data, b.ts, b.sourceId, b.typeId, ips, this.typeKinds);
    }, IMMEDIATE);
    this.sessions.committed();
    // Only now: a rolled-back batch must not leave keys marked as written. (A rolled-back
    // batch may leave bits in the Bloom filter: a false positive, which is harmless.)
    if (this.keysWritten.size > 10_000) this.keysWritten.clear(); // forgetting only costs a redundant INSERT OR IGNORE
    for (const k of newKeys) this.keysWritten.add(k);
    this.lastId = firstId + b.n - 1;
    this.countBatch(b, ips);
    return firstId;
  }

  private addType(t: TypeEntry): void {
    this.typeNames.set(t.id, t.name);
    this.typeKinds[t.id] = kindOfType(t.name);
  }

  private bloomOf(seg: number): Uint8Array {
    if (this.bloom?.seg !== seg) this.bloom = { seg, bits: new Uint8Array(BLOOM_BYTES) };
    return this.bloom.bits;
  }

  private writeKeys(seg: number, kind: "type" | "source", values: Set<number>, added: string[]): void {
    for (const value of values) {
      const k = `${seg}/${kind}/${value}`;
      if (this.keysWritten.has(k)) continue;
      this.insertSegmentKey.run({ kind, value, seg });
      added.push(k);
    }
  }

  private countBatch(b: EventBatch, ips: string[]): void {
    const c = this.counts;
    // Buckets rarely change within a batch; the per-kind maps are looked up once per bucket.
    let bucket = -1;
    let ipKeys: Map<string, number> | null = null;
    let v4Keys: Map<number, number> | null = null;
    const typeCounts = new Map<number, Map<number, number>>();
    let typeKeys: Map<number, number> | null = null;
    for (let i = 0; i < b.n; i++) {
      const h = Math.floor(b.ts[i]! / HOUR_MS);
      if (h !== bucket) {
        bucket = h;
        ipKeys = c.keys("src_ip", h);
        v4Keys = c.ipv4Keys(h);
        typeKeys = typeCounts.get(h) ?? null;
        if (!typeKeys) typeCounts.set(h, (typeKeys = new Map()));
      }
      const ip = ips[i];
      if (ip) {
        const v4 = ipv4Of(ip);
        if (v4 >= 0) bump(v4Keys!, v4, 1, true);
        else bump(ipKeys!, ip, 1, true);
      }
      const t = b.typeId[i]!;
      typeKeys!.set(t, (typeKeys!.get(t) ?? 0) + 1);
    }
    for (const [h, types] of typeCounts) for (const [t, n] of types) c.add("event_type", h, this.typeNames.get(t) ?? String(t), n);
    if (b.credCounts) for (const [kind, h, counts] of JSON.parse(b.credCounts) as [CountKind, number, [string, number][]][]) for (const [key, n] of counts) c.add(kind, h, key, n);
  }

  /** True when counts wait in memory for `flushCounts`. */
  get countsPending(): boolean {
    return !this.counts.empty;
  }

  /** Writes the in-memory counts and moves the watermark to the last committed event. */
  flushCounts(): void {
    const through = this.lastId;
    if (this.addresses) this.countGeo(this.addresses);
    let committed = false;
    try {
      this.db.transaction(() => {
        this.addresses?.write();
        for (const [kind, bucket, key, count] of this.counts.entries()) {
          this.upsertCount.run({ kind, bucket, key, count });
          const day = Math.floor(bucket / DAY_HOURS);
          if (day <= this.dailyThrough) this.upsertDaily.run({ kind, day, key, count });
        }
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
    const add = (bucket: number, g: Geo, n: number) => {
      if (g.country !== null) this.counts.add("country", bucket, g.country, n);
      if (g.asn !== null) this.counts.add("asn", bucket, String(g.asn), n);
    };
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

  /** Counts the events a crash left uncounted (those above the watermark). */
  private recount(): void {
    const through = this.db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, COUNTED_THROUGH)).get()?.value ?? 0;
    if (through >= this.lastId) return;
    const textField = (path: string) => sql<string | null>`case when json_type(${events.data}, ${path}) = 'text' then json_extract(${events.data}, ${path}) end`;
    const rows = this.db
      .select({ ts: events.ts, type: eventTypes.name, ip: events.srcIp, user: textField("$.username"), pass: textField("$.password") })
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
    }
    this.flushCounts();
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
      const bucket = Math.floor(cutoffMs / HOUR_MS);
      this.db.delete(eventCounts).where(lt(eventCounts.bucket, bucket)).run();
      this.db.delete(eventCountsDaily).where(lt(eventCountsDaily.day, Math.floor(bucket / DAY_HOURS))).run();
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
    this.keysWritten.clear();
    // A segment whose old events are gone already is not "done": report progress so the caller goes on.
    return Math.max(deleted, 1);
  }
}

// ---- Reading -------------------------------------------------------------------------------

export interface EventFilter {
  nodeId?: bigint;
  potId?: string;
  potType?: string;
  eventType?: string;
  srcIp?: string;
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
const GEO_BLOOM_MAX = 64;
/** Segment summaries read per step while looking for candidates (256 Bloom filters = 2 MiB). */
export const SEGMENT_SLICE = 256;

export interface TopEntry {
  value: string;
  count: number;
}

export interface StatsSummary {
  totalEvents: number;
  windowEvents: number;
  windowStart: number;
  top: Record<CountKind, TopEntry[]>;
}

export class EventQueries implements EventReader {
  private readonly columns = {
    id: events.id,
    ts: events.ts,
    nodeId: eventSources.nodeId,
    potId: eventSources.potId,
    potType: eventSources.potType,
    eventType: eventTypes.name,
    srcIp: events.srcIp,
    data: events.data,
  };

  private latest: ReturnType<EventQueries["latestStatement"]> | null = null;

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
    let typeId: number | null = null;
    if (filter.eventType !== undefined) {
      typeId = this.db.select({ id: eventTypes.id }).from(eventTypes).where(eq(eventTypes.name, filter.eventType)).get()?.id ?? null;
      if (typeId === null) return { events: [], nextCursor: null };
      conds.push(eq(events.typeId, typeId));
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
    for (const seg of this.candidateSegments(filter, typeId, sourceIds, Math.floor(upper / SEG_SIZE), geoIps)) {
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
    const conds: SQL[] = [];
    if (f.nodeId !== undefined) conds.push(eq(eventSources.nodeId, f.nodeId.toString()));
    if (f.potId !== undefined) conds.push(eq(eventSources.potId, f.potId));
    if (f.potType !== undefined) conds.push(eq(eventSources.potType, f.potType));
    if (conds.length === 0) return null;
    return this.db.select({ id: eventSources.id }).from(eventSources).where(and(...conds)).all().map((r) => r.id);
  }

  /**
   * Segments that can hold a match, newest first: within the time range (per-segment min/max),
   * holding the event type and source (segment keys), and whose Bloom filter may hold the
   * address. Read a slice at a time, so a filter that matches early reads little.
   */
  private *candidateSegments(f: EventFilter, typeId: number | null, sourceIds: number[] | null, topSeg: number, geoIps: string[] | null = null): Generator<number> {
    const keyed = (kind: string, values: number[]) =>
      new Set(
        this.db
          .selectDistinct({ seg: eventSegmentKeys.seg })
          .from(eventSegmentKeys)
          .where(and(eq(eventSegmentKeys.kind, kind), inArray(eventSegmentKeys.value, values), lte(eventSegmentKeys.seg, topSeg)))
          .all()
          .map((r) => r.seg),
      );
    const withType = typeId === null ? null : keyed("type", [typeId]);
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

  /**
   * Totals and top lists over the hours from `now - windowMs` (rounded down to the hour) on:
   * whole days already summed up are read from the daily counters, the hours around them from
   * the hourly ones.
   */
  stats(windowMs: number, top: number, now = Date.now()): StatsSummary {
    const fromBucket = Math.floor((now - windowMs) / HOUR_MS);
    const totalEvents = this.db.select({ n: sql<number | null>`sum(${eventSegments.count})` }).from(eventSegments).get()?.n ?? 0;
    // Daily counters for the days [d0, d1); hourly ones before d0 and from d1 on.
    const d0 = Math.ceil(fromBucket / DAY_HOURS);
    const d1 = Math.max(d0, Math.min(Math.floor(now / HOUR_MS / DAY_HOURS), (readDailyThrough(this.db) ?? -Infinity) + 1));
    const counts = (kind: CountKind) =>
      unionAll(
        this.db
          .select({ key: eventCounts.key, n: eventCounts.count })
          .from(eventCounts)
          .where(and(eq(eventCounts.kind, kind), gte(eventCounts.bucket, fromBucket), or(lt(eventCounts.bucket, d0 * DAY_HOURS), gte(eventCounts.bucket, d1 * DAY_HOURS)))),
        this.db
          .select({ key: eventCountsDaily.key, n: eventCountsDaily.count })
          .from(eventCountsDaily)
          .where(and(eq(eventCountsDaily.kind, kind), gte(eventCountsDaily.day, d0), lt(eventCountsDaily.day, d1))),
      ).as("counts");
    const types = counts("event_type");
    const windowEvents = this.db.select({ n: sql<number | null>`sum(${types.n})` }).from(types).get()?.n ?? 0;
    const topOf = (kind: CountKind): TopEntry[] => {
      const c = counts(kind);
      const total = sql<number>`sum(${c.n})`;
      return this.db.select({ value: c.key, count: total }).from(c).groupBy(c.key).orderBy(desc(total), asc(c.key)).limit(top).all();
    };
    const topLists = Object.fromEntries(COUNT_KINDS.map((k) => [k, topOf(k)])) as Record<CountKind, TopEntry[]>;
    return { totalEvents, windowEvents, windowStart: fromBucket * HOUR_MS, top: topLists };
  }

  private select() {
    return this.db
      .select(this.columns)
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

/** Rows a statement changed (bun:sqlite reports it; Drizzle's types say void). */
const changes = (result: unknown): number => (result as { changes?: number } | undefined)?.changes ?? 0;
