import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../../src/protocol/json";
import { BIG_ID, EventStreamClient, WsClient, getJson, settled, startTestCore, tempDir, until, type TestCore } from "../helpers";

const T0 = Date.parse("2026-11-20T00:00:00Z");
const HOUR = 3_600_000;

/** Sends events on one acknowledged connection and waits for their commit. */
async function ingest(core: TestCore, lines: string[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines);
  await c.ack(lines.length);
  await settled(core);
}

const ids = async (core: TestCore, query: string) => {
  const res = await getJson(`${core.api}/api/v1/events?limit=1000&${query}`);
  expect(res.status).toBe(200);
  return (res.body.events as any[]).map((e) => e.id);
};

describe("GET /api/v1/events", () => {
  test("filters by node, pot, pot type, event type, source address and time, alone and combined", async () => {
    await using core = await startTestCore();
    const ev = (o: Record<string, unknown>) => stringify({ eventid: "cowrie.login.failed", pot_type: "cowrie", ...o });
    await ingest(core, [
      ev({ node_id: BIG_ID, pot_id: "a", src_ip: "10.0.0.1", timestamp: new Date(T0).toISOString() }), // 1
      ev({ node_id: BIG_ID, pot_id: "b", src_ip: "10.0.0.2", timestamp: new Date(T0 + HOUR).toISOString(), eventid: "cowrie.command.input" }), // 2
      ev({ node_id: 7n, pot_id: "a", src_ip: "10.0.0.1", timestamp: new Date(T0 + 2 * HOUR).toISOString() }), // 3
      ev({ node_id: 7n, pot_id: "c", pot_type: "honnypotter", eventid: "honnypotter.login.failed", src_ip: "10.0.0.3", timestamp: (T0 + 3 * HOUR) / 1000 }), // 4
      ev({ pot_id: "d", src_ip: "10.0.0.1", timestamp: T0 + 4 * HOUR }), // 5
    ]);
    expect(await ids(core, "")).toEqual([5, 4, 3, 2, 1]);
    expect(await ids(core, `node_id=${BIG_ID}`)).toEqual([2, 1]);
    expect(await ids(core, "node_id=7")).toEqual([4, 3]);
    expect(await ids(core, "pot_id=a")).toEqual([3, 1]);
    expect(await ids(core, "pot_type=honnypotter")).toEqual([4]);
    expect(await ids(core, "event_type=cowrie.command.input")).toEqual([2]);
    expect(await ids(core, "src_ip=10.0.0.1")).toEqual([5, 3, 1]);
    expect(await ids(core, `since=${new Date(T0 + HOUR).toISOString()}&until=${new Date(T0 + 3 * HOUR).toISOString()}`)).toEqual([3, 2]);
    expect(await ids(core, `since=${(T0 + 3 * HOUR) / 1000}`)).toEqual([5, 4]);
    expect(await ids(core, `until=${T0 + HOUR}`)).toEqual([1]);
    expect(await ids(core, "src_ip=10.0.0.1&pot_id=a&node_id=7")).toEqual([3]);
    expect(await ids(core, "src_ip=10.0.0.1&event_type=cowrie.login.failed&since=2026-11-20T01:00:00Z")).toEqual([5, 3]);
    expect(await ids(core, "src_ip=192.0.2.99")).toEqual([]);
    expect(await ids(core, "event_type=never.seen")).toEqual([]);
    expect(await ids(core, "pot_id=nope")).toEqual([]);
  });

  test("pages follow next_cursor and neither skip nor repeat while events keep arriving", async () => {
    await using core = await startTestCore({ batch_size: 512 });
    // 9,000 events cross segment boundaries (4096 ids each); every third is the type paged through.
    const line = (i: number) => `{"eventid":"${i % 3 === 0 ? "page.me" : "other.type"}","src_ip":"10.1.${(i >> 8) & 255}.${i & 255}","seq":${i}}`;
    await ingest(core, Array.from({ length: 9000 }, (_, i) => line(i)));
    const expected = Array.from({ length: 3000 }, (_, k) => 9000 - 3 * k - 2); // id = i + 1 for i % 3 == 0

    using writer = await EventStreamClient.connect(core.ports.event, { acks: true });
    const seen: number[] = [];
    let cursor: string | null = null;
    let sent = 0;
    do {
      // New events of the same type land between pages.
      writer.send(Array.from({ length: 300 }, (_, i) => line(9000 + sent + i)));
      sent += 300;
      const res: { body: any } = await getJson(`${core.api}/api/v1/events?event_type=page.me&limit=250${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...res.body.events.map((e: any) => e.id));
      cursor = res.body.next_cursor;
      if (seen.length === 250) expect(seen[0]).toBeLessThanOrEqual(9000 + sent);
    } while (cursor !== null);
    await writer.ack(sent);
    const firstPageTop = seen[0]!;
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...seen].sort((x, y) => y - x));
    expect(seen.filter((id) => id <= 9000)).toEqual(expected);
    expect(seen.every((id) => id <= firstPageTop)).toBe(true);
  });

  test("a page is written as the events are one by one, whatever the honeypot's spacing, escapes, repeated keys and number forms", async () => {
    await using core = await startTestCore();
    // Data is stored as the honeypot wrote it; the page must still show it as the API always has.
    const lines = [
      `{ "eventid" : "cowrie.login.failed" , "node_id" : ${BIG_ID}, "pot_id":"a", "src_ip":"10.0.0.1", "username" : "root" , "n" : 1.0, "e": 1e3, "z": -0 }`,
      `{"eventid":"cowrie.command.input","pot_id":"a","input":"caf\\u00e9 \\"q\\" \\ud83d\\udc1d","k":1,"k":2,"nested":{"node_id":18446744073709551557,"list":[1,"x",null,true]}}`,
      `{"eventid":"honnypotter.login.failed","pot_type":"honnypotter","node_id":7,"pot_id":"wp","timestamp":1763600000.5,"src_ip":null,"empty":{},"arr":[]}`,
      stringify({ eventid: "cowrie.session.connect", node_id: BIG_ID, pot_id: "b", src_ip: "2001:db8::1", message: "line\nbreak\ttab </script>" }),
    ];
    await ingest(core, lines);
    for (const query of ["", "limit=2", "limit=2&cursor=3", "pot_id=a", "src_ip=10.0.0.1"]) {
      const page = await getJson(`${core.api}/api/v1/events?${query}`);
      expect(page.status).toBe(200);
      const singles = await Promise.all((page.body.events as { id: number }[]).map(async (e) => (await getJson(`${core.api}/api/v1/events/${e.id}`)).text));
      const cursor = page.body.next_cursor === null ? "null" : JSON.stringify(page.body.next_cursor);
      expect({ query, text: page.text }).toEqual({ query, text: `{"events":[${singles.join(",")}],"next_cursor":${cursor}}` });
    }
    expect((await getJson(`${core.api}/api/v1/events`)).body.events.map((e: { event_type: string }) => e.event_type)).toEqual(["cowrie.session.connect", "honnypotter.login.failed", "cowrie.command.input", "cowrie.login.failed"]);
  });

  test("a page answered again while nothing was committed is the same; a commit shows at once", async () => {
    await using core = await startTestCore();
    const ev = (pot: string) => stringify({ eventid: "cowrie.login.failed", node_id: BIG_ID, pot_id: pot, src_ip: "10.0.0.1" });
    await ingest(core, [ev("a"), ev("b")]);
    const first = await getJson(`${core.api}/api/v1/events?limit=10`);
    expect((await getJson(`${core.api}/api/v1/events?limit=10`)).text).toBe(first.text);
    expect(first.body.events.map((e: { pot_id: string }) => e.pot_id)).toEqual(["b", "a"]);
    await ingest(core, [ev("c")]);
    expect((await getJson(`${core.api}/api/v1/events?limit=10`)).body.events.map((e: { pot_id: string }) => e.pot_id)).toEqual(["c", "b", "a"]);
    expect((await getJson(`${core.api}/api/v1/events?pot_id=c`)).body.events.map((e: { pot_id: string }) => e.pot_id)).toEqual(["c"]);
    await ingest(core, [ev("c")]);
    expect((await getJson(`${core.api}/api/v1/events?pot_id=c`)).body.events.map((e: { id: number }) => e.id)).toEqual([4, 3]);
    // A refused query is refused every time, not remembered as a page.
    for (let i = 0; i < 2; i++) expect((await getJson(`${core.api}/api/v1/events?limit=0`)).status).toBe(400);
  });

  test("limits and bad parameters are 400 with the error shape", async () => {
    await using core = await startTestCore();
    for (const q of ["limit=0", "limit=1001", "node_id=-1", "node_id=abc", "since=yesterday", "until=soon", "cursor=abc"]) {
      const res = await getJson(`${core.api}/api/v1/events?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("bad_request");
    }
  });
});

describe("GET /api/v1/events/{id}", () => {
  test("one event, or 404", async () => {
    await using core = await startTestCore();
    await ingest(core, ['{"eventid":"cowrie.session.connect","src_ip":"10.9.9.9","pot_id":"x","node_id":18446744073709551557,"session":"s1","timestamp":"2026-11-22T01:07:41.947048Z"}']);
    const one = await getJson(`${core.api}/api/v1/events/1`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({
      id: 1,
      node_id: BIG_ID,
      pot_id: "x",
      pot_type: "cowrie",
      event_type: "cowrie.session.connect",
      timestamp: "2026-11-22T01:07:41.947Z",
      src_ip: "10.9.9.9",
      data: { session: "s1" },
    });
    const missing = await getJson(`${core.api}/api/v1/events/2`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: { code: "not_found", message: "event 2 does not exist" } });
    expect((await getJson(`${core.api}/api/v1/events/abc`)).status).toBe(400);
  });
});

describe("GET /api/v1/stats", () => {
  test("totals, ingest counters and top lists over a window", async () => {
    await using core = await startTestCore({ stats_flush_ms: 0 });
    const now = Date.now();
    const login = (ip: string, user: string, pw: string, at = now) => `{"eventid":"cowrie.login.failed","src_ip":"${ip}","username":"${user}","password":"${pw}","timestamp":${at}}`;
    await ingest(core, [
      login("10.0.0.1", "root", "123456"),
      login("10.0.0.1", "root", "admin"),
      login("10.0.0.1", "admin", "123456"),
      login("10.0.0.2", "root", "123456"),
      '{"eventid":"cowrie.session.connect","src_ip":"10.0.0.2"}',
      login("10.0.0.9", "old", "old", now - 3 * 86_400_000),
      "not an event",
    ]);
    const expectTop = async (window: string, body: Record<string, unknown>) => {
      // The counters are written by the writer just after the commit.
      const res = await until(async () => {
        const r = await getJson(`${core.api}/api/v1/stats?window=${window}&top=2`);
        return r.body.window_events === body.window_events ? r : null;
      }, "counters written");
      expect(res!.status).toBe(200);
      expect(res!.body).toMatchObject(body);
    };
    await expectTop("24h", {
      total_events: 6,
      window: "24h",
      window_events: 5,
      ingest: { received: 7, committed: 6, rejected: 1, connections: 0, pending: 0 },
      top: {
        src_ips: [
          { value: "10.0.0.1", count: 3 },
          { value: "10.0.0.2", count: 2 },
        ],
        usernames: [
          { value: "root", count: 3 },
          { value: "admin", count: 1 },
        ],
        passwords: [
          { value: "123456", count: 3 },
          { value: "admin", count: 1 },
        ],
        event_types: [
          { value: "cowrie.login.failed", count: 4 },
          { value: "cowrie.session.connect", count: 1 },
        ],
      },
    });
    await expectTop("7d", { total_events: 6, window_events: 6 });
    const bad = await getJson(`${core.api}/api/v1/stats?window=forever`);
    expect(bad.status).toBe(400);
  });
});

test("OpenAPI documents the event and stats routes with tags, summaries and examples", async () => {
  await using core = await startTestCore();
  const doc = (await getJson(`${core.api}/swagger/json`)).body;
  const ops = [doc.paths["/api/v1/events"].get, doc.paths["/api/v1/events/{id}"].get, doc.paths["/api/v1/stats"].get];
  expect(ops.map((o: any) => o.tags)).toEqual([["Events"], ["Events"], ["Stats"]]);
  for (const o of ops) {
    expect(o.summary).toBeString();
    expect(stringify(o.responses["200"])).toContain('"example"');
  }
  expect(stringify(doc.paths["/api/v1/events"].get.parameters)).toContain("next_cursor");
});

test("`__proto__` and `constructor` in an event's data stay its own keys wherever it is read, and pollute nothing", async () => {
  using dir = tempDir();
  const file = join(dir.path, "events.ndjson");
  await using core = await startTestCore({ outputs: [{ name: "file", type: "file", path: file }] });
  using feed = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
  // As a honeypot writes it: an object literal here would set a prototype, not a key.
  await ingest(core, ['{"eventid":"cowrie.session.connect","session":"proto0001","src_ip":"10.0.0.1","__proto__":{"x":1},"constructor":"y"}']);
  const data = (d: any): unknown => [Object.getPrototypeOf(d) === Object.prototype, Object.entries(d)];
  const stored: unknown = [true, [["session", "proto0001"], ["__proto__", { x: 1 }], ["constructor", "y"]]];
  expect(data((await getJson(`${core.api}/api/v1/events`)).body.events[0].data)).toEqual(stored);
  expect(data((await getJson(`${core.api}/api/v1/events/1`)).body.data)).toEqual(stored);
  expect(data((await feed.nextKind("PotEvent")).data)).toEqual(stored);
  const session = (await getJson(`${core.api}/api/v1/sessions?session=proto0001`)).body.sessions[0].id;
  expect(data((await getJson(`${core.api}/api/v1/sessions/${session}`)).body.session_events[0].data)).toEqual(stored);
  await until(() => existsSync(file) && readFileSync(file, "utf8").endsWith("\n"), "the output's line");
  expect(data(JSON.parse(readFileSync(file, "utf8")).honeybee.data)).toEqual(stored);
  expect([({} as any).x, Object.hasOwn(Object.prototype, "x")]).toEqual([undefined, false]);
});
