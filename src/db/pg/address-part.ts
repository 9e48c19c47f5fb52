/**
 * GeoIP on PostgreSQL: what a batch adds to event_addresses and to the `country` and `asn`
 * counters, as a part of both PostgreSQL writers (event-writer.ts PgBatchPart), so it runs
 * where events are written: the single writer, or a cluster's writer role.
 *
 * The batch's addresses are tallied per (hour, address) before its transaction, each distinct
 * one resolved once (address-book.ts, the same step as SQLite's flush); the counters are
 * upserted in the batch's transaction, so they commit with the events on either writer (a
 * cluster's writers keep no counts in memory; they are a few keys per batch). Counts of days
 * already summed up go to the daily counters too, as the writers' own do.
 */
import type { SQL } from "bun";
import { ints, texts } from "./arrays";
import { AddressBook, type GeoResolver, type NewAddress } from "../address-book";
import { DAILY_THROUGH, DAY_HOURS, HOUR_MS } from "../event-store";
import type { PgBatchPart, Rows } from "./event-writer";

export interface AddressDelta {
  fresh: NewAddress[];
  kinds: string[];
  buckets: number[];
  keys: string[];
  counts: number[];
}

function push(d: AddressDelta, kind: string, bucket: number, key: string, n: number): void {
  d.kinds.push(kind);
  d.buckets.push(bucket);
  d.keys.push(key);
  d.counts.push(n);
}

export class PgAddressPart implements PgBatchPart<AddressDelta> {
  private readonly book: AddressBook;
  /** The last delta prepared and not committed: its transaction failed, so its addresses are new again. */
  private open: AddressDelta | null = null;

  constructor(resolve: GeoResolver) {
    this.book = new AddressBook(resolve);
  }

  prepare(r: Rows): AddressDelta {
    if (this.open) this.book.forget(this.open.fresh);
    const byHour = new Map<number, Map<string, number>>();
    let hour = -1;
    let ips: Map<string, number> | undefined;
    for (let i = 0; i < r.n; i++) {
      const ip = r.ips[i];
      if (!ip) continue;
      const h = Math.floor(r.ts[i]! / HOUR_MS);
      if (h !== hour) {
        hour = h;
        ips = byHour.get(h);
        if (!ips) byHour.set(h, (ips = new Map()));
      }
      ips!.set(ip, (ips!.get(ip) ?? 0) + 1);
    }
    const d: AddressDelta = { fresh: [], kinds: [], buckets: [], keys: [], counts: [] };
    // Oldest hour first: an address new in this batch is first seen in its earliest hour.
    for (const h of [...byHour.keys()].sort((x, y) => x - y)) {
      const countries = new Map<string, number>();
      const asns = new Map<number, number>();
      for (const [ip, n] of byHour.get(h)!) {
        const g = this.book.see(ip, h * HOUR_MS, d.fresh);
        if (g.country !== null) countries.set(g.country, (countries.get(g.country) ?? 0) + n);
        if (g.asn !== null) asns.set(g.asn, (asns.get(g.asn) ?? 0) + n);
      }
      for (const [key, n] of countries) push(d, "country", h, key, n);
      for (const [asn, n] of asns) push(d, "asn", h, String(asn), n);
    }
    this.open = d;
    return d;
  }

  async write(tx: SQL, d: AddressDelta): Promise<void> {
    if (d.fresh.length) {
      await tx`insert into event_addresses (ip, country, asn, as_org, first_seen)
        select * from unnest(${texts(d.fresh.map((a) => a.ip))}::text[], ${texts(d.fresh.map((a) => a.geo.country))}::text[],
                             ${ints(d.fresh.map((a) => a.geo.asn))}::int4[], ${texts(d.fresh.map((a) => a.geo.as_org))}::text[],
                             ${ints(d.fresh.map((a) => a.firstSeen))}::int8[])
        on conflict do nothing`;
    }
    if (d.kinds.length === 0) return;
    const counts = () => tx`unnest(${texts(d.kinds)}::text[], ${ints(d.buckets)}::int4[], ${texts(d.keys)}::text[], ${ints(d.counts)}::int8[])`;
    await tx`insert into event_counts (kind, bucket, key, count) select * from ${counts()}
      on conflict (kind, bucket, key) do update set count = event_counts.count + excluded.count`;
    // Read here, not kept: the single writer sums up days in transactions of its own, a cluster's writers in theirs.
    await tx`insert into event_counts_daily (kind, day, key, count)
      select u.kind, floor(u.bucket::float8 / ${DAY_HOURS})::int4, u.key, sum(u.count) from ${counts()} as u(kind, bucket, key, count)
      where floor(u.bucket::float8 / ${DAY_HOURS}) <= (select value from event_meta where key = ${DAILY_THROUGH})
      group by 1, 2, 3
      on conflict (kind, day, key) do update set count = event_counts_daily.count + excluded.count`;
  }

  committed(_d: AddressDelta): void {
    this.open = null;
  }
}

/** The writers' parts for GeoIP: none when enrichment is off. */
export const addressParts = (resolve: GeoResolver | undefined): PgBatchPart[] => (resolve ? [new PgAddressPart(resolve)] : []);
