/**
 * The per-address enrichment table (event_addresses) and the country/ASN counters.
 *
 * Cost model (bench/ingest.ts measures it): nothing happens per event. When the writer flushes
 * its hourly counters (every `stats_flush_ms`, or before a stats read), it already holds one
 * count per distinct (hour, address); each is looked up once (GeoLookup caches per address),
 * added to the `country` and `asn` counters of that hour, and an address never seen before is
 * inserted into event_addresses. So the work is per distinct address per flush interval, and
 * bounded like the address counters themselves (see TRACKED_KEYS in hourly-counts.ts). What an
 * address adds is worked out by address-book.ts, shared with the PostgreSQL writers.
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import { AddressBook, type GeoResolver, type NewAddress } from "./address-book";
import type { Db } from "./index";
import { rowWriter, slot } from "./positional";
import { eventAddresses } from "./schema";
import type { MaybePromise } from "./stores";

export type { GeoResolver };

/** What the features read of the address table: the country/ASN filters and the AS names of the stats. */
export interface AddressStorage {
  /** Addresses whose enrichment matches a country and/or ASN. */
  where(f: { country?: string; asn?: number }): MaybePromise<string[]>;
  /** The AS organisation names of some ASNs, as stored with their addresses. */
  asOrgs(asns: number[]): MaybePromise<Map<number, string | null>>;
}

export class SqlAddressStore implements AddressStorage {
  constructor(private readonly db: Db) {}
  where(f: { country?: string; asn?: number }): string[] {
    return addressesWhere(this.db, f);
  }
  asOrgs(asns: number[]): Map<number, string | null> {
    return asOrgs(this.db, asns);
  }
}

export class AddressWriter {
  private readonly book: AddressBook;
  private readonly insert;
  private pending: NewAddress[] = [];

  constructor(db: Db, resolve: GeoResolver) {
    this.book = new AddressBook(resolve);
    const ph = (i: number) => sql`${slot(i)}`;
    // Many rows per statement (positional.ts): a flush may add thousands of new addresses.
    this.insert = rowWriter(
      db,
      (rows) =>
        db
          .insert(eventAddresses)
          .values(Array.from({ length: rows }, (_, r) => ({ ip: ph(r * 5), country: ph(r * 5 + 1), asn: ph(r * 5 + 2), asOrg: ph(r * 5 + 3), firstSeen: ph(r * 5 + 4) })))
          .onConflictDoNothing(),
      5,
    );
  }

  /**
   * One address's count in one hour: returns the counter keys it adds to (country, ASN), and
   * queues the address for the table when it is new.
   */
  see(ip: string, hourStartMs: number) {
    return this.book.see(ip, hourStartMs, this.pending);
  }

  /** `see` for an IPv4 address given as its 32-bit number (`text` builds the dotted quad). */
  seeV4(v4: number, text: (v4: number) => string, hourStartMs: number) {
    return this.book.seeV4(v4, text, hourStartMs, this.pending);
  }

  /** Writes the queued addresses; call inside the counters' transaction. */
  write(): void {
    this.insert(this.pending.map((a) => [a.ip, a.geo.country, a.geo.asn, a.geo.as_org, a.firstSeen]));
  }

  /** After the transaction: `committed` false forgets the queued ones so the next flush retries them. */
  done(committed: boolean): void {
    if (!committed) this.book.forget(this.pending);
    this.pending = [];
  }
}

/** Addresses whose enrichment matches a country and/or ASN. */
export function addressesWhere(db: Db, f: { country?: string; asn?: number }): string[] {
  const conds = [];
  if (f.country !== undefined) conds.push(eq(eventAddresses.country, f.country));
  if (f.asn !== undefined) conds.push(eq(eventAddresses.asn, f.asn));
  return db.select({ ip: eventAddresses.ip }).from(eventAddresses).where(and(...conds)).all().map((r) => r.ip);
}

/** The AS organisation names of some ASNs, as stored with their addresses. */
export function asOrgs(db: Db, asns: number[]): Map<number, string | null> {
  if (asns.length === 0) return new Map();
  const rows = db
    .select({ asn: eventAddresses.asn, org: sql<string | null>`max(${eventAddresses.asOrg})` })
    .from(eventAddresses)
    .where(inArray(eventAddresses.asn, asns))
    .groupBy(eventAddresses.asn)
    .all();
  return new Map(rows.map((r) => [r.asn!, r.org]));
}

/** The country and ASN of each of some addresses that have a row (filtered stats, stats-range.ts). */
export function addressGeo(db: Db, ips: string[]): Map<string, { country: string | null; asn: number | null }> {
  const out = new Map<string, { country: string | null; asn: number | null }>();
  // SQLite's bound-parameter limit is 32766: a few statements for a large sample.
  for (let i = 0; i < ips.length; i += 10_000) {
    const rows = db
      .select({ ip: eventAddresses.ip, country: eventAddresses.country, asn: eventAddresses.asn })
      .from(eventAddresses)
      .where(inArray(eventAddresses.ip, ips.slice(i, i + 10_000)))
      .all();
    for (const r of rows) out.set(r.ip, { country: r.country, asn: r.asn });
  }
  return out;
}
