/**
 * Event input built to hurt (issue "Hardening"): deep nesting, forged node ids, `__proto__`,
 * unreadable timestamps, control characters for the log. Real Core, real sockets.
 */
import { describe, expect, test } from "bun:test";
import { TOTP_PERIOD_S, totpCode } from "../../src/protocol/totp";
import { CONTROLS, createLogger } from "../../src/log";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, getJson, LineClient, registerNode, startTestCore, until, waitForEvents, WsClient } from "../helpers";

const events = async (core: { api: string }, query = "") => (await getJson(`${core.api}/api/v1/events?limit=1000${query}`)).body.events as any[];
const stats = async (core: { api: string }) => (await getJson(`${core.api}/api/v1/stats`)).body;
/** A native line whose `d` member nests `levels` arrays (the line itself is level 1). */
const nested = (eventid: string, levels: number) => `{"eventid":"${eventid}","d":${"[".repeat(levels - 1)}${"]".repeat(levels - 1)}}`;

describe("nesting depth", () => {
  test("a line nested past max_nesting_depth is refused and counted on 9100, quickly; the limit itself is accepted", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const started = performance.now();
    // 39,000 levels in 78 KB: once stored, and taking 2.7 s to take in.
    c.send([nested("deep.refused", 39_000), nested("depth.64", 64), nested("depth.65", 65), `{"version":2,"message":{"PotEvent":{"event_type":"env.deep","data":{"d":${"{\"a\":".repeat(70)}1${"}".repeat(70)}}}}}`]);
    await c.ack(4);
    expect(performance.now() - started).toBeLessThan(1000);
    expect((await events(core)).map((e) => e.event_type)).toEqual(["depth.64"]);
    expect((await stats(core)).ingest).toMatchObject({ received: 4, committed: 1, rejected: 3 });
  });

  test("max_nesting_depth is configurable, and the fast path keeps to it too", async () => {
    await using core = await startTestCore({ max_nesting_depth: 4 });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([nested("d.4", 4), nested("d.5", 5), '{"eventid":"d.obj","a":{"b":{"c":{"d":{}}}}}', '{"eventid":"d.obj4","a":{"b":{"c":{}}}}']);
    await c.ack(4);
    expect((await events(core)).map((e) => e.event_type)).toEqual(["d.obj4", "d.4"]);
  });

  test("refused and surviving lines in one write: every ack covers only lines that were stored or refused", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    // One write: a valid line, 100,000 levels, three valid lines. All four valid ones vanished,
    // and later acks counted lines that were never stored.
    c.send(Buffer.from(['{"eventid":"a.0"}', nested("deep", 100_000), '{"eventid":"a.1"}', '{"eventid":"a.2"}', '{"eventid":"a.3"}', ""].join("\n")));
    c.send('{"eventid":"b.1"}');
    await until(() => c.acked >= 6, "all six lines acknowledged");
    expect((await events(core)).map((e) => e.event_type)).toEqual(["b.1", "a.3", "a.2", "a.1", "a.0"]);
    expect((await stats(core)).ingest).toMatchObject({ received: 6, committed: 5, rejected: 1, pending: 0 });
  });

  test("on 9001: a deep message gets an Error too_deep, is counted, and what follows in the same write is handled", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    const deep = `{"version":2,"message":{"PotEvent":{"event_type":"x","data":${"[".repeat(50_000)}${"]".repeat(50_000)}}}}`;
    const registration = stringify({ version: 2, message: { NodeRegistration: { node_id: 4242n, node_name: "n", address: "127.0.0.1", port: 0, node_type: "Full" } } });
    node.sendRaw(`${deep}\n${registration}\n`);
    expect(await node.nextKind("Error")).toMatchObject({ code: "too_deep" });
    expect(await node.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    expect((await stats(core)).ingest).toMatchObject({ rejected: 1 });
  });
});

describe("node ids of proven senders", () => {
  test("a registered node's PotEvent and PotLog on the control channel are stored as that node's, whatever node_id they name", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core, 4242n, "n-4242");
    node.send("PotEvent", { node_id: 31337n, pot_id: "p", event_type: "forged.event", data: {} });
    node.send("PotLog", { node_id: 999999n, pot_id: "p", log_type: "stdout", data: "x" });
    await waitForEvents(core, 2);
    expect((await events(core)).map((e) => [e.event_type, e.node_id])).toEqual([
      ["log.stdout", 4242n],
      ["forged.event", 4242n],
    ]);
  });

  test("an authenticated event stream's lines are its node's, on the fast and the general path", async () => {
    const ENROLL = "enroll-secret-for-tests";
    await using core = await startTestCore({ node_enrollment_token: ENROLL });
    const reg = await LineClient.connect(core.ports.node);
    reg.send("NodeRegistration", { node_id: 4242n, node_name: "n", address: "127.0.0.1", port: 0, node_type: "Full", enrollment_token: ENROLL });
    const key = (await reg.nextKind("RegistrationAck")).totp_key as string;
    reg.close();
    using c = await EventStreamClient.connect(core.ports.event);
    const step = Math.floor(Date.now() / 1000 / TOTP_PERIOD_S) * TOTP_PERIOD_S * 1000;
    c.send(stringify({ version: 2, message: { EventStreamHello: { node_id: 4242n, acks: true, totp_code: totpCode(key, step) } } }));
    c.send([
      '{"eventid":"fast.forged","node_id":999999}',
      // An escape in a column: the general path.
      '{"eventid":"general.forged","node_id":31337,"pot_id":"p\\u0031"}',
      stringify({ version: 2, message: { PotEvent: { node_id: 31337n, event_type: "envelope.forged", data: {} } } }),
      '{"eventid":"no.node"}',
    ]);
    await c.ack(4);
    expect((await events(core)).map((e) => [e.event_type, e.node_id])).toEqual([
      ["no.node", 4242n],
      ["envelope.forged", 4242n],
      ["general.forged", 4242n],
      ["fast.forged", 4242n],
    ]);
  });
});

describe("event data", () => {
  test("__proto__ stays a plain key of data, and its credentials do not reach the stats", async () => {
    await using core = await startTestCore({ stats_flush_ms: 0 });
    // The live feed shows data as stored (REST's response schema drops a __proto__ key).
    using feed = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([
      '{"eventid":"proto.native","__proto__":{"username":"polluted-user","password":"polluted-pass"}}',
      '{"event_type":"proto.bare","data":{"__proto__":{"username":"polluted-user"},"constructor":"kept"}}',
      stringify({ version: 2, message: { PotEvent: { event_type: "proto.envelope", data: JSON.parse('{"__proto__":{"password":"polluted-pass"}}') } } }),
    ]);
    await c.ack(3);
    const published = [await feed.nextKind("PotEvent"), await feed.nextKind("PotEvent"), await feed.nextKind("PotEvent")];
    const byType = Object.fromEntries(published.map((e) => [e.event_type, e.data]));
    expect(JSON.stringify(byType["proto.native"])).toBe('{"__proto__":{"username":"polluted-user","password":"polluted-pass"}}');
    expect(JSON.stringify(byType["proto.bare"])).toBe('{"__proto__":{"username":"polluted-user"},"constructor":"kept"}');
    expect(JSON.stringify(byType["proto.envelope"])).toBe('{"__proto__":{"password":"polluted-pass"}}');
    await until(async () => (await stats(core)).top.event_types.length === 3, "the counters flushed", 1000);
    const top = (await stats(core)).top;
    expect([top.usernames, top.passwords]).toEqual([[], []]);
    expect(({} as any).username).toBeUndefined();
  });

  test("an unreadable timestamp keeps its text in data, takes the receive time, and is counted", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const before = Date.now();
    c.send(['{"eventid":"ts.x","timestamp":"x 1"}', `{"event_type":"ts.sql","timestamp":"' OR '1'='1"}`, '{"eventid":"ts.ok","timestamp":"Sun, 22 Nov 2026 01:04:59 GMT"}', '{"eventid":"ts.space","timestamp":"2026-11-22 01:04:59"}']);
    await c.ack(4);
    const byType = Object.fromEntries((await events(core)).map((e) => [e.event_type, e]));
    for (const [type, text] of [["ts.x", "x 1"], ["ts.sql", "' OR '1'='1"]]) {
      expect(byType[type!].data.timestamp).toBe(text);
      expect(Date.parse(byType[type!].timestamp)).toBeGreaterThanOrEqual(before - 1);
    }
    expect(byType["ts.ok"].timestamp).toBe("2026-11-22T01:04:59.000Z");
    expect(byType["ts.space"].timestamp).toBe("2026-11-22T01:04:59.000Z");
    expect((await stats(core)).ingest.unreadable_timestamps).toBe(2);
  });
});

describe("the event log", () => {
  test("no raw control character or line separator of event data reaches a log line", async () => {
    const out: string[] = [];
    const logger = createLogger("info", { destination: { write: (s: string) => void out.push(s) } });
    await using core = await startTestCore({ log_events: true }, logger);
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const lines = [
      // A raw carriage return and tab as whitespace (valid JSON), on the fast and the general path.
      '{"eventid":"log.cr",\r"a":"x",\t"b":1}',
      '{"eventid":"log.cr.nested",\r"a":{"b":\r1}}',
      // Escaped controls stay escaped; raw U+2028, U+2029 and a C1 control inside strings.
      '{"eventid":"log.esc","a":"\\u001b[2J\\r\\u0007","b":"x\u2028y\u2029z\u009b1m"}',
    ];
    c.send(lines);
    using node = await registerNode(core, 7n, "n7");
    node.send("PotEvent", { pot_id: "p\u2028q", event_type: "log.control\u0085", src_ip: "1.2.3.4\u2028", data: { s: "\r\u001b[2J\u2028" } });
    await c.ack(lines.length);
    await until(() => out.join("").split("\n").filter((l) => l.includes('"msg":"event"')).length === 4, "four event log lines");
    const logged = out.join("").split("\n").filter((l) => l.includes('"msg":"event"'));
    for (const l of logged) {
      expect(l).not.toMatch(CONTROLS);
      JSON.parse(l);
    }
    const byType = Object.fromEntries(logged.map((l) => JSON.parse(l).event).map((e) => [e.event_type, e]));
    const stored = Object.fromEntries((await events(core)).map((e) => [e.event_type, e]));
    for (const type of ["log.cr", "log.cr.nested", "log.esc", "log.control\u0085"]) expect(byType[type].data).toEqual(stored[type].data);
    expect(byType["log.esc"].data).toEqual({ a: "\u001b[2J\r\u0007", b: "x\u2028y\u2029z\u009b1m" });
    expect(byType["log.control\u0085"]).toMatchObject({ pot_id: "p\u2028q", data: { s: "\r\u001b[2J\u2028" } });
  });
});
