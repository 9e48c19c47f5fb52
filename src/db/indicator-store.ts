/**
 * The queries behind `GET /api/v1/indicators` and `/api/v1/blocklist`.
 *
 * Addresses, their counts and first/last hour come from the hourly address counters (no
 * per-event index exists, by design: see bloom.ts and hourly-counts.ts), so times are to the
 * hour and an address seen once during a flood may be missing, as in the stats' top lists.
 * Credentials, URLs and file hashes come from the window's login and file events of the chosen
 * addresses: a scan of the newest MAX_SCAN events of those types in the window.
 */
import { and, desc, eq, gte, inArray, sql } from "drizzle-orm";
import type { Db } from "./index";
import { HOUR_MS, SEG_SIZE } from "./event-store";
import { eventAddresses, eventCounts, events, eventSegments, eventTypes } from "./schema";
import type { MaybePromise } from "./stores";

/** Login and file events read for credentials, URLs and hashes, newest first, at most. */
export const MAX_SCAN = 1_000_000;
/** Credentials, URLs and hashes listed per address at most (most frequent first). */
const PER_ADDRESS = 100;

export interface AddressIndicator {
  ip: string;
  first_seen: number;
  last_seen: number;
  count: number;
  country: string | null;
  asn: number | null;
  as_org: string | null;
  credentials: { username: string; password: string | null; count: number }[];
  urls: string[];
  sha256: string[];
}

export interface ActiveAddress {
  ip: string;
  /** First and last hour bucket. */
  first: number;
  last: number;
  count: number;
}

/** What the indicators and the blocklist read: SQLite here, PostgreSQL in pg/indicator-store.ts. */
export interface IndicatorStorage {
  indicators(fromMs: number, minCount: number, limit: number, now?: number): MaybePromise<AddressIndicator[]>;
  activeAddresses(fromMs: number, minCount: number, limit: number): MaybePromise<ActiveAddress[]>;
}

export class SqlIndicatorStore implements IndicatorStorage {
  constructor(private readonly db: Db) {}
  indicators(fromMs: number, minCount: number, limit: number, now = Date.now()): AddressIndicator[] {
    return indicators(this.db, fromMs, minCount, limit, now);
  }
  activeAddresses(fromMs: number, minCount: number, limit: number): ActiveAddress[] {
    return activeAddresses(this.db, fromMs, minCount, limit);
  }
}

/** Addresses seen at least `minCount` times from `fromMs` on (hour-rounded), most active first. */
export function activeAddresses(db: Db, fromMs: number, minCount: number, limit: number): ActiveAddress[] {
  const total = sql<number>`sum(${eventCounts.count})`;
  return db
    .select({ ip: eventCounts.key, first: sql<number>`min(${eventCounts.bucket})`, last: sql<number>`max(${eventCounts.bucket})`, count: total })
    .from(eventCounts)
    .where(and(eq(eventCounts.kind, "src_ip"), gte(eventCounts.bucket, Math.floor(fromMs / HOUR_MS))))
    .groupBy(eventCounts.key)
    .having(gte(total, minCount))
    .orderBy(desc(total), eventCounts.key)
    .limit(limit)
    .all();
}

export function indicators(db: Db, fromMs: number, minCount: number, limit: number, now = Date.now()): AddressIndicator[] {
  const active = activeAddresses(db, fromMs, minCount, limit);
  if (active.length === 0) return [];
  const ips = active.map((a) => a.ip);
  const geo = new Map<string, AddressGeo>();
  for (let i = 0; i < ips.length; i += 500) for (const r of db.select().from(eventAddresses).where(inArray(eventAddresses.ip, ips.slice(i, i + 500))).all()) geo.set(r.ip, r);
  return assemble(active, geo, details(db, fromMs, ips), now);
}

type AddressGeo = { country: string | null; asn: number | null; asOrg: string | null };

/** The indicators of the active addresses from their enrichment and details (every backend). */
export function assemble(active: ActiveAddress[], geo: Map<string, AddressGeo>, extra: Map<string, Details>, now: number): AddressIndicator[] {
  return active.map((a) => {
    const g = geo.get(a.ip);
    const d = extra.get(a.ip);
    return {
      ip: a.ip,
      first_seen: a.first * HOUR_MS,
      last_seen: Math.min(now, (a.last + 1) * HOUR_MS - 1),
      count: a.count,
      country: g?.country ?? null,
      asn: g?.asn ?? null,
      as_org: g?.asOrg ?? null,
      credentials: d ? [...d.credentials.values()].sort((x, y) => y.count - x.count).slice(0, PER_ADDRESS) : [],
      urls: d ? [...d.urls].slice(0, PER_ADDRESS) : [],
      sha256: d ? [...d.hashes].slice(0, PER_ADDRESS) : [],
    };
  });
}

export interface Details {
  credentials: Map<string, { username: string; password: string | null; count: number }>;
  urls: Set<string>;
  hashes: Set<string>;
}

/** Credentials tried, URLs fetched and files' SHA-256 per address, from the window's events. */
function details(db: Db, fromMs: number, ips: string[]): Map<string, Details> {
  const types = db
    .select({ id: eventTypes.id })
    .from(eventTypes)
    .where(sql`${eventTypes.name} like '%login%' or ${eventTypes.name} like '%file_download%' or ${eventTypes.name} like '%file_upload%'`)
    .all()
    .map((t) => t.id);
  const out = new Map<string, Details>();
  if (types.length === 0) return out;
  // Ids of events in the window start at the first segment that reaches into it.
  const firstSeg = db.select({ seg: sql<number | null>`min(${eventSegments.seg})` }).from(eventSegments).where(gte(eventSegments.maxTs, fromMs)).get()?.seg;
  if (firstSeg === null || firstSeg === undefined) return out;
  const wanted = new Set(ips);
  const text = (path: string) => sql<string | null>`case when json_type(${events.data}, ${path}) = 'text' then json_extract(${events.data}, ${path}) end`;
  const rows = db
    .select({ ip: events.srcIp, username: text("$.username"), password: text("$.password"), url: text("$.url"), shasum: text("$.shasum") })
    .from(events)
    .where(and(gte(events.id, firstSeg * SEG_SIZE), gte(events.ts, fromMs), inArray(events.typeId, types), sql`${events.srcIp} is not null`))
    .orderBy(desc(events.id))
    .limit(MAX_SCAN)
    .all();
  for (const r of rows) if (r.ip && wanted.has(r.ip)) addDetails(out, r.ip, r);
  return out;
}

/** What one event of an address adds to its details (its fields that are text, or null). */
export function addDetails(out: Map<string, Details>, ip: string, r: { username: string | null; password: string | null; url: string | null; shasum: string | null }): void {
  let d = out.get(ip);
  if (!d) out.set(ip, (d = { credentials: new Map(), urls: new Set(), hashes: new Set() }));
  if (r.username !== null) {
    const key = JSON.stringify([r.username, r.password]);
    const c = d.credentials.get(key);
    if (c) c.count++;
    else d.credentials.set(key, { username: r.username, password: r.password, count: 1 });
  }
  if (r.url !== null) d.urls.add(r.url);
  if (r.shasum !== null && /^[0-9a-f]{64}$/i.test(r.shasum)) d.hashes.add(r.shasum.toLowerCase());
}
