/**
 * The indicators and the blocklist on PostgreSQL (../indicator-store.ts): addresses from the
 * hourly address counters, their enrichment from event_addresses, and credentials, URLs and
 * hashes from the window's login and file events of those addresses (the newest MAX_SCAN).
 */
import type { SQL } from "bun";
import { HOUR_MS, SEG_SIZE } from "../event-store";
import { addDetails, assemble, MAX_SCAN, type ActiveAddress, type AddressIndicator, type Details, type IndicatorStorage } from "../indicator-store";

/** A field of the event's data when it is text. */
const textOf = (d: Record<string, unknown>, k: string) => (typeof d[k] === "string" ? (d[k] as string) : null);

export class PgIndicatorStore implements IndicatorStorage {
  constructor(private readonly sql: SQL) {}

  async activeAddresses(fromMs: number, minCount: number, limit: number): Promise<ActiveAddress[]> {
    return (
      await this.sql`select key as ip, min(bucket) as first, max(bucket) as last, sum(count)::float8 as count from event_counts
        where kind = 'src_ip' and bucket >= ${Math.floor(fromMs / HOUR_MS)}
        group by key having sum(count) >= ${minCount} order by sum(count) desc, key collate "C" limit ${limit}`
    ).map((r: ActiveAddress) => ({ ip: r.ip, first: r.first, last: r.last, count: r.count }));
  }

  async indicators(fromMs: number, minCount: number, limit: number, now = Date.now()): Promise<AddressIndicator[]> {
    const sql = this.sql;
    const active = await this.activeAddresses(fromMs, minCount, limit);
    if (active.length === 0) return [];
    const ips = active.map((a) => a.ip);
    const rows: { ip: string; country: string | null; asn: number | null; as_org: string | null }[] =
      await sql`select ip, country, asn, as_org from event_addresses where ip = any(${sql.array(ips, "TEXT")})`;
    const geo = new Map(rows.map((r) => [r.ip, { country: r.country, asn: r.asn, asOrg: r.as_org }]));
    return assemble(active, geo, await this.details(fromMs, ips), now);
  }

  private async details(fromMs: number, ips: string[]): Promise<Map<string, Details>> {
    const sql = this.sql;
    const out = new Map<string, Details>();
    const types = (await sql`select id from event_types where name like '%login%' or name like '%file_download%' or name like '%file_upload%'`).map((t: { id: number }) => t.id);
    if (types.length === 0) return out;
    // Ids of events in the window start at the first segment that reaches into it.
    const [first] = await sql`select min(seg)::float8 as seg from event_segments where max_ts >= ${fromMs}`;
    if (first.seg === null) return out;
    // The data is read here, not as jsonb: PostgreSQL refuses text holding \u0000 anywhere in it.
    const rows: { ip: string; data: string }[] = await sql`
      select src_ip as ip, data from events
      where id >= ${first.seg * SEG_SIZE} and ts >= ${fromMs} and type_id = any(${sql.array(types, "INT")}) and src_ip = any(${sql.array(ips, "TEXT")})
      order by id desc limit ${MAX_SCAN}`;
    for (const r of rows) {
      let d: Record<string, unknown>;
      try {
        d = JSON.parse(r.data);
      } catch {
        continue;
      }
      addDetails(out, r.ip, { username: textOf(d, "username"), password: textOf(d, "password"), url: textOf(d, "url"), shasum: textOf(d, "shasum") });
    }
    return out;
  }
}
