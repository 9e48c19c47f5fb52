/**
 * What counted source addresses add, for every backend: each distinct (hour, address) is
 * resolved once (GeoLookup caches per address) into the `country` and `asn` counters of that
 * hour, and an address not written before is queued for event_addresses. No database here:
 * the SQLite writer feeds it at its counters' flush (address-store.ts), the PostgreSQL writers
 * per batch (pg/address-part.ts), and each writes what it queued.
 */
import type { Geo } from "../geo";

export type GeoResolver = (ip: string) => Geo;

/** An address to insert into event_addresses; `v4` is its 32-bit number when it was seen as one. */
export interface NewAddress {
  ip: string;
  geo: Geo;
  firstSeen: number;
  v4?: number;
}

/** Addresses remembered as written; past this the set is forgotten (a redundant insert that does nothing). */
const KNOWN_MAX = 500_000;

export class AddressBook {
  private readonly known = new Set<string>();
  /**
   * IPv4 addresses already written, with what they resolved to, by their 32-bit number: the
   * counters hold them as numbers, and a number key spares building the text on every flush.
   */
  private readonly knownV4 = new Map<number, Geo>();

  constructor(private readonly resolve: GeoResolver) {}

  /** One address's count in one hour: its geo; queued on `fresh` when it is new. */
  see(ip: string, hourStartMs: number, fresh: NewAddress[]): Geo {
    const geo = this.resolve(ip);
    if (!this.known.has(ip)) {
      if (this.known.size >= KNOWN_MAX) this.known.clear();
      this.known.add(ip);
      fresh.push({ ip, geo, firstSeen: hourStartMs });
    }
    return geo;
  }

  /** `see` for an IPv4 address given as its 32-bit number (`text` builds the dotted quad). */
  seeV4(v4: number, text: (v4: number) => string, hourStartMs: number, fresh: NewAddress[]): Geo {
    const hit = this.knownV4.get(v4);
    if (hit !== undefined) return hit;
    const ip = text(v4);
    const geo = this.resolve(ip);
    if (this.knownV4.size >= KNOWN_MAX) this.knownV4.clear();
    this.knownV4.set(v4, geo);
    fresh.push({ ip, geo, firstSeen: hourStartMs, v4 });
    return geo;
  }

  /** Addresses queued for a write that did not commit: seen as new again next time. */
  forget(fresh: NewAddress[]): void {
    for (const a of fresh) {
      if (a.v4 === undefined) this.known.delete(a.ip);
      else this.knownV4.delete(a.v4);
    }
  }
}

/** The counter keys an address's geo adds to. */
export function geoKeys(g: Geo, add: (kind: "country" | "asn", key: string) => void): void {
  if (g.country !== null) add("country", g.country);
  if (g.asn !== null) add("asn", String(g.asn));
}
