/** The address table on PostgreSQL (../address-store.ts AddressStorage): written by the writers' address part (address-part.ts). */
import type { SQL } from "bun";
import type { AddressStorage } from "../address-store";

/** The condition on event_addresses of a country and/or ASN filter, its values as parameters. */
export function addressCondition(sql: SQL, f: { country?: string; asn?: number }) {
  const conds = [];
  if (f.country !== undefined) conds.push(sql`country = ${f.country}`);
  if (f.asn !== undefined) conds.push(sql`asn = ${f.asn}`);
  return conds.length === 0 ? sql`true` : conds.reduce((a, c) => sql`${a} and ${c}`);
}

export class PgAddressStore implements AddressStorage {
  constructor(private readonly sql: SQL) {}

  async where(f: { country?: string; asn?: number }, limit?: number): Promise<string[]> {
    const sql = this.sql;
    const rows: { ip: string }[] = await sql`select ip from event_addresses where ${addressCondition(sql, f)} ${limit === undefined ? sql`` : sql`limit ${limit}`}`;
    return rows.map((r) => r.ip);
  }

  async asOrgs(asns: number[]): Promise<Map<number, string | null>> {
    if (asns.length === 0) return new Map();
    const sql = this.sql;
    const rows: { asn: number; org: string | null }[] = await sql`select asn, max(as_org) as org from event_addresses where asn = any(${sql.array(asns, "INT")}) group by asn`;
    return new Map(rows.map((r) => [r.asn, r.org]));
  }
}
