/**
 * The GeoIP part of the PostgreSQL writers (src/db/pg/address-part.ts) on the machine's
 * server: addresses stored once with their first hour, country and ASN counters committed
 * with the batch (daily too for a day already summed up), and an address whose transaction
 * failed written by the next attempt.
 */
import { expect, test } from "bun:test";
import type { SQL } from "bun";
import type { EventBatch } from "../../src/db/event-store";
import { openPgDatabase, pgClient } from "../../src/db/pg";
import { PgAddressPart } from "../../src/db/pg/address-part";
import { PgAddressStore } from "../../src/db/pg/address-store";
import { PgEventQueries } from "../../src/db/pg/event-queries";
import { PgEventWriter, type PgBatchPart } from "../../src/db/pg/event-writer";
import type { Geo } from "../../src/geo";
import { scratchDatabase } from "../helpers/postgres";

const HOUR = 3_600_000;
const CLOUDFLARE: Geo = { country: "AU", asn: 13335, as_org: "Cloudflare" };
const NOWHERE: Geo = { country: null, asn: null, as_org: null };

function batch(events: [number, string][], first: boolean): EventBatch {
  const texts = events.map(() => '{"username":"root"}');
  const dataEnds = new Int32Array(events.length);
  for (let i = 0, at = 0; i < events.length; i++) dataEnds[i] = at += texts[i]!.length;
  return {
    n: events.length,
    ts: Float64Array.from(events.map((e) => e[0])),
    sourceId: new Int32Array(events.length).fill(1),
    typeId: new Int32Array(events.length).fill(1),
    srcIps: events.map((e) => e[1]).join("\n"),
    data: new TextEncoder().encode(texts.join("")).buffer as ArrayBuffer,
    dataEnds,
    credCounts: "",
    newSources: first ? [{ id: 1, nodeId: "7", potId: "cowrie-01", potType: "cowrie" }] : [],
    newTypes: first ? [{ id: 1, name: "cowrie.login.failed" }] : [],
    spools: [],
  };
}

test("addresses once with their first hour, country and ASN counted with the batch, and a failed transaction's addresses written by the next", async () => {
  const db = await scratchDatabase("honeybee_test");
  const migrated = await openPgDatabase(db.url, 2);
  const writerSql = pgClient(db.url, 1);
  const lookups: string[] = [];
  let failNext = true;
  const failOnce: PgBatchPart<null> = {
    prepare: () => null,
    write: async () => {
      if (failNext) {
        failNext = false;
        throw new Error("the server went away");
      }
    },
    committed: () => {},
  };
  try {
    const part = new PgAddressPart((ip) => (lookups.push(ip), ip.startsWith("1.") ? CLOUDFLARE : NOWHERE));
    const w = await PgEventWriter.open(writerSql, "copy", [part, failOnce]);
    const sql: SQL = migrated.$client;
    // A fresh database: yesterday counts as summed up already, today does not.
    const [{ through }] = await sql`select value::int as through from event_meta where key = 'counts_daily_through'`;
    const yesterday = (through * 24 + 12) * HOUR;
    const today = Math.floor(Date.now() / HOUR) * HOUR;
    const first = batch([[yesterday, "1.1.1.1"], [yesterday + 1, "1.1.1.1"], [today, "1.0.0.1"], [today, "10.0.0.1"], [today, ""]], true);
    await expect(w.write(first)).rejects.toThrow("the server went away");
    expect(await sql`select count(*)::int as n from event_addresses`).toEqual([{ n: 0 }]);
    await w.write(first);
    await w.write(batch([[today + 1, "1.1.1.1"], [today + 2, "1.0.0.2"]], false));

    const addresses = await sql`select ip, country, asn, as_org, first_seen::float8 as first_seen from event_addresses order by ip`;
    expect(addresses).toEqual([
      { ip: "1.0.0.1", ...asRow(CLOUDFLARE), first_seen: today },
      { ip: "1.0.0.2", ...asRow(CLOUDFLARE), first_seen: today },
      { ip: "1.1.1.1", ...asRow(CLOUDFLARE), first_seen: yesterday },
      { ip: "10.0.0.1", ...asRow(NOWHERE), first_seen: today },
    ]);
    // Looked up once per distinct address and batch attempt, not per event.
    expect(lookups.filter((ip) => ip === "1.1.1.1")).toHaveLength(3);
    const counts = await sql`select kind, bucket, key, count::int as n from event_counts where kind in ('country', 'asn') order by bucket, kind`;
    expect(counts).toEqual([
      { kind: "asn", bucket: yesterday / HOUR, key: "13335", n: 2 },
      { kind: "country", bucket: yesterday / HOUR, key: "AU", n: 2 },
      { kind: "asn", bucket: today / HOUR, key: "13335", n: 3 },
      { kind: "country", bucket: today / HOUR, key: "AU", n: 3 },
    ]);
    expect(await sql`select kind, day, key, count::int as n from event_counts_daily where kind in ('country', 'asn') order by kind`).toEqual([
      { kind: "asn", day: through, key: "13335", n: 2 },
      { kind: "country", day: through, key: "AU", n: 2 },
    ]);

    const q = new PgEventQueries(sql);
    const ids = async (f: { country?: string; asn?: number }) => (await q.list(f, 100, null)).events.map((e) => e.src_ip);
    expect(await ids({ country: "AU" })).toEqual(["1.0.0.2", "1.1.1.1", "1.0.0.1", "1.1.1.1", "1.1.1.1"]);
    expect(await ids({ asn: 13335, country: "NZ" })).toEqual([]);
    expect(await new PgAddressStore(sql).asOrgs([13335, 64512])).toEqual(new Map([[13335, "Cloudflare"]]));
  } finally {
    await writerSql.close();
    await migrated.$client.close();
    await db.drop();
  }
});

const asRow = (g: Geo) => ({ country: g.country, asn: g.asn, as_org: g.as_org });
