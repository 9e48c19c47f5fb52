/**
 * The per-address enrichment table (event_addresses) and the country/ASN counters.
 *
 * Cost model (bench/ingest.ts measures it): nothing happens per event. When the writer flushes
 * its hourly counters (every `stats_flush_ms`, or before a stats read), it already holds one
 * count per distinct (hour, address); each is looked up once (GeoLookup caches per address),
 * added to the `country` and `asn` counters of that hour, and an address never seen before is
 * inserted into event_addresses. So the work is per distinct address per flush interval, and
 * bounded like the address counters themselves (see TRACKED_KEYS in hourly-counts.ts).
 */
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Geo } from "../geo";
import type { Db } from "./index";
import { rowWriter, slot } from "./positional";
import { eventAddresses } from "./schema";

export type GeoResolver = (ip: string) => Geo;

/** Addresses remembered as written; past this the set is forgotten (a redundant INSERT OR IGNORE). */
const KNOWN_MAX = 500_000;

export class AddressWriter {
  private readonly known = new Set<string>();
  /**
   * IPv4 addresses already written, with what they resolved to, by their 32-bit number: the
   * counters hold them as numbers, and a number key spares building the text on every flush.
   */
  private readonly knownV4 = new Map<number, Geo>();
  private readonly insert;
  private pending: { ip: string; geo: Geo; firstSeen: number; v4?: number }[] = [];

  constructor(
    db: Db,
    private readonly resolve: GeoResolver,
  ) {
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
  see(ip: string, hourStartMs: number): Geo {
    const geo = this.resolve(ip);
    if (!this.known.has(ip)) {
      if (this.known.size >= KNOWN_MAX) this.known.clear();
      this.known.add(ip);
      this.pending.push({ ip, geo, firstSeen: hourStartMs });
    }
    return geo;
  }

  /** `see` for an IPv4 address given as its 32-bit number (`text` builds the dotted quad). */
  seeV4(v4: number, text: (v4: number) => string, hourStartMs: number): Geo {
    const hit = this.knownV4.get(v4);
    if (hit !== undefined) return hit;
    const ip = text(v4);
    const geo = this.resolve(ip);
    if (this.knownV4.size >= KNOWN_MAX) this.knownV4.clear();
    this.knownV4.set(v4, geo);
    this.pending.push({ ip, geo, firstSeen: hourStartMs, v4 });
    return geo;
  }

  /** Writes the queued addresses; call inside the counters' transaction. */
  write(): void {
    this.insert(this.pending.map((a) => [a.ip, a.geo.country, a.geo.asn, a.geo.as_org, a.firstSeen]));
  }

  /** After the transaction: `committed` false forgets the queued ones so the next flush retries them. */
  done(committed: boolean): void {
    if (!committed) {
      for (const a of this.pending) {
        if (a.v4 === undefined) this.known.delete(a.ip);
        else this.knownV4.delete(a.v4);
      }
    }
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
