/**
 * The stats over any time range (`window` of minutes, hours or days, or `from`/`to`) and of one
 * node, pot or kind, their timeline, and the top list of any data field: real events sent
 * through the event socket to a real Core (SQLite, PostgreSQL and a cluster by the test switch).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseManifest } from "../../src/catalogue/loader";
import { stringify } from "../../src/protocol/json";
import { BIG_ID, EventStreamClient, getJson, registerNode, settled, startTestCore, type TestCore } from "../helpers";

const MIN = 60_000;
const HOUR = 3_600_000;
const NOW = Date.now();
/** An hour five hours back, on the hour: its events are far from the recent ones and from any window's edge. */
const T = Math.floor(NOW / HOUR) * HOUR - 5 * HOUR;
const RECENT = new Date(NOW - 5 * MIN).toISOString();
const iso = (ms: number) => new Date(ms).toISOString();

let core: TestCore;
let node: Awaited<ReturnType<typeof registerNode>>;

const ssh = (o: Record<string, unknown>) => stringify({ eventid: "cowrie.login.failed", node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", timestamp: RECENT, ...o });
const web = (o: Record<string, unknown>) => stringify({ eventid: "web.request", node_id: 7n, pot_id: "web-1", pot_type: "web", timestamp: RECENT, method: "GET", ...o });

beforeAll(async () => {
  core = await startTestCore({ stats_flush_ms: 0 });
  node = await registerNode(core, BIG_ID, "edge-a");
  const lines = [
    ssh({ src_ip: "10.0.0.1", username: "root", password: "123456" }),
    ssh({ src_ip: "10.0.0.1", username: "root", password: "admin" }),
    ssh({ src_ip: "10.0.0.2", username: "admin", password: "123456" }),
    ssh({ eventid: "cowrie.command.input", src_ip: "10.0.0.2", input: "uname -a" }),
    web({ src_ip: "198.51.100.4", path: "/.env", user_agent: "curl/8.5.0" }),
    web({ src_ip: "198.51.100.4", path: "/.env", user_agent: "zgrab/0.x" }),
    web({ src_ip: "198.51.100.5", path: "/wp-login.php", user_agent: "curl/8.5.0" }),
    web({ src_ip: "198.51.100.5", headers: ["Host: x"] }),
    // Hour T: one event at 15 minutes past, one at 45.
    ssh({ src_ip: "10.0.0.9", username: "old", password: "one", timestamp: iso(T + 15 * MIN) }),
    ssh({ src_ip: "10.0.0.9", username: "old", password: "two", timestamp: iso(T + 45 * MIN) }),
  ];
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines);
  await c.ack(lines.length);
  await settled(core);
});

afterAll(async () => {
  node?.[Symbol.dispose]();
  await core?.[Symbol.asyncDispose]();
});

const stats = async (query: string) => {
  const r = await getJson(`${core.api}/api/v1/stats?${query}`);
  expect([r.status, r.text.slice(0, 300)]).toEqual([200, r.text.slice(0, 300)]);
  return r.body;
};
const counts = (o: Record<string, number>) => Object.entries(o).map(([value, count]) => ({ value, count }));

describe("GET /api/v1/stats over a range", () => {
  test("a 15 minute window counts exactly the events in it; the top lists are the hourly counters' of the hours it reaches into", async () => {
    const s = await stats("window=15m");
    expect(s).toMatchObject({ total_events: 10, window: "15m", window_events: 8, sampled: null });
    const start = Date.parse(s.window_start);
    expect(Date.parse(s.window_end) - start).toBe(15 * MIN);
    expect(Math.abs(Date.parse(s.window_end) - Date.now())).toBeLessThan(60_000);
    expect(s.top_start).toBe(iso(Math.floor(start / HOUR) * HOUR));
    expect(s.top.usernames).toEqual(counts({ root: 2, admin: 1 }));
    expect(s.top.event_types).toEqual(counts({ "web.request": 4, "cowrie.login.failed": 3, "cowrie.command.input": 1 }));
    expect(s.top.commands).toEqual(counts({ "uname -a": 1 }));
    expect(s.top.credentials).toEqual(counts({ "admin / 123456": 1, "root / 123456": 1, "root / admin": 1 }));
  });

  test("from/to: window_events is exact for any range, the top lists count the whole hours it reaches into", async () => {
    const whole = await stats(`from=${iso(T)}&to=${iso(T + HOUR)}`);
    expect(whole).toMatchObject({ window: "custom", window_start: iso(T), window_end: iso(T + HOUR), window_events: 2, top_start: iso(T), top_end: iso(T + HOUR), sampled: null });
    expect(whole.top.passwords).toEqual(counts({ one: 1, two: 1 }));
    // Ten minutes of that hour: one event in it; the counters still count the whole hour.
    const part = await stats(`from=${iso(T + 10 * MIN)}&to=${iso(T + 20 * MIN)}`);
    expect(part).toMatchObject({ window_events: 1, top_start: iso(T), top_end: iso(T + HOUR) });
    expect(part.top.usernames).toEqual(counts({ old: 2 }));
    // Unix seconds and an age, as `since`/`until` take them; `to` defaults to now.
    expect((await stats(`from=${Math.floor((T - HOUR) / 1000)}&to=${Math.floor((T + 30 * MIN) / 1000)}`)).window_events).toBe(1);
    expect((await stats("from=6h")).window_events).toBe(10);
    expect((await stats(`from=${iso(T + 50 * MIN)}&to=${iso(NOW - 30 * MIN)}`)).window_events).toBe(0);
  });

  test("node (by id or name), pot and kind filters: exact counts, top lists over the range's matching events", async () => {
    const pot = await stats("window=1h&pot_id=web-1");
    expect(pot).toMatchObject({ total_events: 10, window_events: 4, sampled: 4 });
    expect(pot.top).toMatchObject({ event_types: counts({ "web.request": 4 }), src_ips: counts({ "198.51.100.4": 2, "198.51.100.5": 2 }), usernames: [], commands: [] });
    const byName = await stats("window=1h&node_id=edge-a");
    expect(byName).toMatchObject({ window_events: 4, sampled: 4 });
    expect(byName.top).toMatchObject({ usernames: counts({ root: 2, admin: 1 }), passwords: counts({ "123456": 2, admin: 1 }), commands: counts({ "uname -a": 1 }) });
    expect(byName.top.event_types).toEqual(counts({ "cowrie.login.failed": 3, "cowrie.command.input": 1 }));
    const byId = await stats(`window=1h&node_id=${BIG_ID}`);
    expect(byId.top).toEqual(byName.top);
    expect((await stats("window=24h&pot_type=cowrie")).window_events).toBe(6);
    // The filter's range is the range itself, not whole hours.
    const part = await stats(`from=${iso(T + 10 * MIN)}&to=${iso(T + 20 * MIN)}&pot_type=cowrie`);
    expect(part).toMatchObject({ window_events: 1, sampled: 1, top_start: iso(T + 10 * MIN) });
    expect(part.top.passwords).toEqual(counts({ one: 1 }));
    expect(part.top.credentials).toEqual(counts({ "old / one": 1 }));
    const none = await stats("window=24h&node_id=7&pot_type=cowrie");
    expect(none).toMatchObject({ window_events: 0, sampled: 0, top: { src_ips: [], event_types: [] } });
  });

  test("bad ranges and filters are a 400 that says what is wrong", async () => {
    const cases: [string, string][] = [
      ["window=forever", 'window must be a number of minutes, hours or days like 15m, 24h or 7d (at most 366d), got "forever"'],
      ["window=367d", 'window must be a number of minutes, hours or days like 15m, 24h or 7d (at most 366d), got "367d"'],
      [`window=1h&from=${iso(T)}`, "give either window or from/to, not both"],
      [`from=${iso(T + HOUR)}&to=${iso(T)}`, `from must be before to (from ${iso(T + HOUR)}, to ${iso(T)})`],
      [`to=${iso(T)}`, "query parameter to needs from (or give a window instead)"],
      ["from=yesterday", 'query parameter from must be an RFC 3339 time (2026-11-22T01:07:41Z), unix seconds, or an age such as 30s, 15m, 2h, 7d; got "yesterday"'],
      ["node_id=nowhere", 'query parameter node_id: no node is named "nowhere"'],
    ];
    for (const path of ["stats", "stats/timeline", "stats/top?field=path&"]) {
      for (const [query, message] of cases) {
        const r = await getJson(`${core.api}/api/v1/${path}${path.endsWith("&") ? "" : "?"}${query}`);
        expect([path, query, r.status, r.body.error?.message]).toEqual([path, query, 400, message]);
      }
    }
  });
});

describe("GET /api/v1/stats/timeline over a range", () => {
  test("from/to steps cover the range; the filters count only their events", async () => {
    const t = (await getJson(`${core.api}/api/v1/stats/timeline?from=${iso(T)}&to=${iso(T + HOUR)}&step=5m`)).body;
    expect(t.start).toBe(iso(T));
    expect(t.counts).toEqual([0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0]);
    const webOnly = (await getJson(`${core.api}/api/v1/stats/timeline?from=${iso(T)}&to=${iso(T + HOUR)}&step=5m&pot_type=web`)).body;
    expect(webOnly.counts).toEqual(new Array(12).fill(0));
    const recent = (await getJson(`${core.api}/api/v1/stats/timeline?window=15m&step=1m&pot_id=web-1`)).body;
    expect([recent.counts.length, recent.counts.reduce((a: number, n: number) => a + n, 0)]).toEqual([15, 4]);
    const byName = (await getJson(`${core.api}/api/v1/stats/timeline?window=6h&step=1h&node_id=edge-a`)).body;
    expect(byName.counts.reduce((a: number, n: number) => a + n, 0)).toBe(6);
    const tooMany = await getJson(`${core.api}/api/v1/stats/timeline?from=${iso(T - 2 * 86_400_000)}&to=${iso(T)}&step=1m`);
    expect([tooMany.status, tooMany.body.error.message]).toEqual([400, "window / step gives 2880 steps; at most 1440: take a larger step"]);
  });
});

describe("GET /api/v1/stats/top", () => {
  const top = async (query: string) => {
    const r = await getJson(`${core.api}/api/v1/stats/top?${query}`);
    expect([r.status, r.text.slice(0, 300)]).toEqual([200, r.text.slice(0, 300)]);
    return r.body;
  };

  test("the most frequent values of a data field, of one event type, node, pot or kind, over a range", async () => {
    expect(await top("field=path&event_type=web.request&window=1h")).toMatchObject({
      field: "path",
      event_type: "web.request",
      window: "1h",
      values: counts({ "/.env": 2, "/wp-login.php": 1 }),
      sampled: 4,
    });
    expect((await top("field=data.user_agent&pot_type=web")).values).toEqual(counts({ "curl/8.5.0": 2, "zgrab/0.x": 1 }));
    // Each element of an array.
    expect((await top("field=headers&pot_id=web-1")).values).toEqual(counts({ "Host: x": 1 }));
    expect(await top(`field=password&node_id=edge-a&from=${iso(T)}&to=${iso(T + 30 * MIN)}`)).toMatchObject({ window: "custom", event_type: null, values: counts({ one: 1 }), sampled: 1 });
    expect(await top("field=no.such.field&window=24h")).toMatchObject({ values: [], sampled: 10 });
    // A combination (the credential pairs), of every type a prefix starts.
    expect(await top("field=username,data.password&event_type=cowrie.login.*&window=24h&top=2")).toMatchObject({
      event_type: "cowrie.login.*",
      values: counts({ "admin / 123456": 1, "old / one": 1 }),
      sampled: 5,
    });
    expect(await top("field=path&event_type=web.request&pot_type=cowrie")).toMatchObject({ values: [], sampled: 0 });
  });

  test("a missing or malformed field is a 400", async () => {
    for (const [query, message] of [
      ["window=1h", "query parameter field is required: the path of a data field, like path or data.url"],
      ["field=a..b", 'query parameter field must be keys joined by dots, like url or data.request.method, or up to 4 of them joined by commas, like username,password; got "a..b"'],
      ["field=a,", 'query parameter field must be keys joined by dots, like url or data.request.method, or up to 4 of them joined by commas, like username,password; got "a,"'],
    ]) {
      const r = await getJson(`${core.api}/api/v1/stats/top?${query}`);
      expect([r.status, r.body.error?.message]).toEqual([400, message]);
    }
  });
});

describe("the kinds' dashboards", () => {
  test("GET /api/v1/catalogue gives each built-in kind's dashboard: fields of events it emits, each a table GET /api/v1/stats/top answers", async () => {
    const kinds = (await getJson(`${core.api}/api/v1/catalogue`)).body.kinds as { name: string; events: string[]; dashboard: { title: string; event_type: string; field: string }[] }[];
    expect(kinds.map((k) => k.name).sort()).toEqual(["adb", "cowrie", "docker", "honnypotter", "mysql", "redis", "tcp", "web"]);
    for (const k of kinds) {
      expect([k.name, k.dashboard.length > 0]).toEqual([k.name, true]);
      for (const d of k.dashboard) {
        const emitted = d.event_type.endsWith(".*") ? k.events.some((e) => e.startsWith(d.event_type.slice(0, -1))) : k.events.includes(d.event_type);
        expect([k.name, d.event_type, emitted]).toEqual([k.name, d.event_type, true]);
      }
    }
    const cowrie = kinds.find((k) => k.name === "cowrie")!;
    expect(cowrie.dashboard).toContainEqual({ title: "Credentials", event_type: "cowrie.login.*", field: "username,password" });
    // The web kind's URL table, as the console asks for it, over the events sent above.
    const web = kinds.find((k) => k.name === "web")!.dashboard.find((d) => d.title === "URLs")!;
    const urls = (await getJson(`${core.api}/api/v1/stats/top?${new URLSearchParams({ field: web.field, event_type: web.event_type, pot_id: "web-1", window: "1h" })}`)).body;
    expect(urls.values).toEqual(counts({ "/.env": 2, "/wp-login.php": 1 }));
  });

  test("a manifest's dashboard entry with a malformed field or event type is refused", () => {
    const manifest = (dashboard: unknown) => JSON.stringify({ name: "k", description: "d", entry: ["x"], config: {}, events: ["k.a"], dashboard });
    expect(parseManifest(manifest([{ title: "A", event_type: "k.a", field: "x.y" }]))).toMatchObject({ dashboard: [{ field: "x.y" }] });
    for (const bad of [{ title: "A", event_type: "k.a", field: "x..y" }, { title: "A", event_type: "k a", field: "x" }, { title: "", event_type: "k.a", field: "x" }, { title: "A", field: "x" }]) {
      expect(typeof parseManifest(manifest([bad]))).toBe("string");
    }
  });
});

describe("filtered counts kept per segment", () => {
  test("a filtered range counts what was added since it was last asked (last: it adds events)", async () => {
    const before = await stats("window=24h&pot_id=web-1");
    expect(before).toMatchObject({ window_events: 4, top: { event_types: counts({ "web.request": 4 }) } });
    // One step holds the whole segment (these few events are one): its counts by source are read once and kept.
    const total = async (query: string) => {
      const t = (await getJson(`${core.api}/api/v1/stats/timeline?window=366d&step=9999h&${query}`)).body;
      return t.counts.reduce((a: number, n: number) => a + n, 0);
    };
    expect([await total("pot_id=web-1"), await total("pot_type=cowrie"), await total("pot_id=none")]).toEqual([4, 6, 0]);
    const lines = [web({ eventid: "web.exploit", src_ip: "198.51.100.6", family: "env_probe" }), web({ src_ip: "198.51.100.6", path: "/.env" })];
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send(lines);
    await c.ack(lines.length);
    await settled(core);
    const after = await stats("window=24h&pot_id=web-1");
    expect(after).toMatchObject({ window_events: 6, top: { event_types: counts({ "web.request": 5, "web.exploit": 1 }) } });
    expect((await stats("window=24h&pot_type=cowrie")).window_events).toBe(6);
    expect((await stats("window=24h")).window_events).toBe(12);
    expect([await total("pot_id=web-1"), await total("pot_type=cowrie"), await total("pot_type=web")]).toEqual([6, 6, 6]);
    expect(await total("node_id=7")).toBe(6);
  });
});
