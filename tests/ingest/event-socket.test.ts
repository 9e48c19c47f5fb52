import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createLogger } from "../../src/log";
import { stringify } from "../../src/protocol/json";
import { startNode } from "../../src/node/agent";
import { BIG_ID, EventStreamClient, LineClient, getJson, registerNode, startTestCore, tempDir, until, waitForEvents } from "../helpers";

const sample = (name: string) => readFileSync(join(import.meta.dir, "samples", name));
const COWRIE = sample("cowrie-2.9-honeybee-output.jsonl");
const HONNYPOTTER = sample("honnypotter-forwarder-output.jsonl");
const lineCount = (b: Buffer) => b.toString().split("\n").filter(Boolean).length;

function captureLog(level: "info" | "warn") {
  const lines: any[] = [];
  return { lines, logger: createLogger(level, { destination: { write: (s: string) => void lines.push(...s.split("\n").filter(Boolean).map((l) => JSON.parse(l))) } }) };
}

const events = async (core: { api: string }, query = "") => (await getJson(`${core.api}/api/v1/events?limit=1000${query}`)).body.events as any[];
const stats = async (core: { api: string }) => (await getJson(`${core.api}/api/v1/stats`)).body;

describe("event socket", () => {
  test("every line of the real Cowrie and HonnyPotter output is accepted as it is", async () => {
    await using core = await startTestCore();
    using cowrie = await EventStreamClient.connect(core.ports.event);
    using php = await EventStreamClient.connect(core.ports.event);
    cowrie.send(COWRIE);
    php.send(HONNYPOTTER);
    const total = lineCount(COWRIE) + lineCount(HONNYPOTTER);
    await waitForEvents(core, total);

    const all = await events(core);
    expect(all).toHaveLength(total);
    expect((await stats(core)).ingest).toMatchObject({ committed: total, rejected: 0 });
    const login = all.find((e) => e.event_type === "cowrie.login.success" && e.data.protocol === "telnet");
    expect(login).toMatchObject({ node_id: null, pot_id: "cowrie-lab", pot_type: "cowrie", src_ip: "127.0.0.1", timestamp: "2026-11-22T01:07:43.270Z" });
    expect(login.data).toMatchObject({ username: "root", password: "toor", session: "4f1da0ba5dbe", time: 1795309663.2703931 });
    const php1 = all.find((e) => e.pot_type === "honnypotter");
    expect(php1).toMatchObject({ pot_id: "honnypotter-01", event_type: "honnypotter.login.failed", timestamp: "2026-11-22T01:04:59.000Z" });
    expect(php1.data.user_agent).toBe("curl/7.88.1");
    expect(cowrie.bytesReceived + php.bytesReceived).toBe(0);
  });

  test("every accepted shape: envelopes, both bare PotEvent styles, PotLog, native, back-to-back objects, CRLF", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { node_id: BIG_ID, acks: true });
    const lines = [
      stringify({ version: 2, message: { PotEvent: { node_id: 42n, pot_id: "p-env", pot_type: "cowrie", event_type: "env.event", timestamp: "2026-11-22T01:00:00Z", data: { src_ip: "10.0.0.1" } } } }),
      stringify({ version: 2, message: { PotLog: { pot_id: "p-log", pot_type: "cowrie", log_type: "stderr", data: "crashed", timestamp: 1795309499 } } }),
      stringify({ pot_id: "p-a", pot_type: "cowrie", event_type: "bare.a", timestamp: 1795309499000, data: { src_ip: "10.0.0.2", username: "u" } }),
      stringify({ pot_id: "p-b", event: "bare.b", message: "hello", metadata: { src_ip: "10.0.0.3" }, timestamp: "2026-11-22T01:00:01Z" }),
      '{"eventid":"native.x","src_ip":"10.0.0.4"}{"eventid":"native.y","src_ip":"10.0.0.5"}',
      '{"eventid":"crlf.z","timestamp":1795309499}\r',
    ];
    c.send(lines);
    await c.ack(lines.length);
    const byType = Object.fromEntries((await events(core)).map((e) => [e.event_type, e]));
    expect(Object.keys(byType).sort()).toEqual(["bare.a", "bare.b", "crlf.z", "env.event", "log.stderr", "native.x", "native.y"]);
    expect(byType["env.event"]).toMatchObject({ node_id: 42n, pot_id: "p-env", src_ip: "10.0.0.1", timestamp: "2026-11-22T01:00:00.000Z" });
    expect(byType["log.stderr"]).toMatchObject({ node_id: BIG_ID, pot_id: "p-log", data: { line: "crashed" } });
    expect(byType["bare.a"]).toMatchObject({ node_id: BIG_ID, src_ip: "10.0.0.2", data: { username: "u" } });
    expect(byType["bare.b"]).toMatchObject({ pot_id: "p-b", src_ip: "10.0.0.3", data: { message: "hello" } });
    expect(byType["native.y"]).toMatchObject({ pot_type: "native", src_ip: "10.0.0.5" });
    expect(byType["crlf.z"].timestamp).toBe("2026-11-22T01:04:59.000Z");
  });

  test("u64 node ids stay exact from the wire to REST", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send(['{"eventid":"x.a","node_id":18446744073709551557}', '{"eventid":"x.b","node_id":18446744073709551556,"data":{"node_id":18446744073709551555}}']);
    await c.ack(2);
    const res = await getJson(`${core.api}/api/v1/events?node_id=18446744073709551556`);
    expect(res.text).toContain('"node_id":18446744073709551556');
    expect(res.text).toContain('"node_id":18446744073709551555');
    expect(res.body.events).toHaveLength(1);
    expect((await events(core, "&node_id=18446744073709551557"))[0].event_type).toBe("x.a");
  });

  test("an event without node_id gets the node of its pot from the registry", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core, 777n, "sensor-pots");
    node.send("PotStatusUpdate", { node_id: 777n, pot_id: "owned-pot", pot_type: "cowrie", status: "Running" });
    await until(() => core.registry.nodeOfPot("owned-pot") === 777n, "pot registered");
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send('{"eventid":"cowrie.session.connect","honeybee_honeypot_id":"owned-pot"}');
    await c.ack(1);
    expect((await events(core))[0]).toMatchObject({ node_id: 777n, pot_id: "owned-pot" });
  });

  test("acks: seq counts committed and rejected lines after the hello; each commit is acknowledged", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event, { node_id: 5n, acks: true });
    c.send(['{"eventid":"a.1"}', "not json", '{"eventid":"a.2"}']);
    await c.ack(3);
    c.send("[1,2]");
    await c.ack(4);
    c.send(['{"eventid":"a.3"}']);
    await c.ack(5);
    expect(c.acked).toBe(5);
    expect((await events(core)).map((e) => e.event_type)).toEqual(["a.3", "a.2", "a.1"]);
  });

  test("bad input is counted, logged and skipped; the connection and its other lines go on", async () => {
    await using core = await startTestCore({ max_message_bytes: 2048 });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const bad = ["{not json", "[1,2,3]", "42", '"text"', '{"no":"event type"}', '{"eventid":""}', '{"eventid":"x","node_id":-3}', `{"eventid":"big","pad":"${"x".repeat(4096)}"}`];
    c.send(['{"eventid":"ok.first"}', ...bad, '{"eventid":"ok.last"}']);
    await c.ack(bad.length + 2);
    expect((await events(core)).map((e) => e.event_type)).toEqual(["ok.last", "ok.first"]);
    expect((await stats(core)).ingest).toMatchObject({ received: bad.length + 2, committed: 2, rejected: bad.length, pending: 0 });
  });

  test("a client that never asked for acks gets nothing written back, not even for bad input", async () => {
    await using core = await startTestCore();
    using c = await EventStreamClient.connect(core.ports.event);
    c.send(["garbage", '{"eventid":"quiet.one"}', '{"version":2,"message":{"EventStreamHello":{"acks":true}}}']);
    await waitForEvents(core, 1);
    await until(async () => (await stats(core)).ingest.rejected === 2, "both bad lines counted");
    expect(c.bytesReceived).toBe(0);
  });

  test("a peer that closes without a final newline still delivers its last line", async () => {
    await using core = await startTestCore();
    const c = await EventStreamClient.connect(core.ports.event);
    c.send(Buffer.from('{"eventid":"tail.one"}\n{"eventid":"tail.two"}'));
    await c.written();
    c.close();
    await waitForEvents(core, 2);
    expect((await events(core)).map((e) => e.event_type)).toEqual(["tail.two", "tail.one"]);
  });

  test("connections are counted", async () => {
    await using core = await startTestCore();
    const a = await EventStreamClient.connect(core.ports.event, { acks: true });
    using b = await EventStreamClient.connect(core.ports.event, { acks: true });
    a.send('{"eventid":"c.1"}');
    b.send('{"eventid":"c.2"}');
    await Promise.all([a.ack(1), b.ack(1)]);
    expect((await stats(core)).ingest.connections).toBe(2);
    a.close();
    await until(async () => (await stats(core)).ingest.connections === 1, "one connection left");
  });
});

describe("event socket: idle connections", () => {
  const line = (n: number) => `{"eventid":"cowrie.login.failed","src_ip":"203.0.113.${n}","pot_id":"p"}\n`;

  test("a stream that opened with a hello and falls silent is closed; streams without one are kept", async () => {
    await using core = await startTestCore({ first_message_timeout_ms: 200, idle_timeout_ms: 600 });
    // A honeypot's output plugin on Core's host: connects, and sends its first event much later.
    using early = await LineClient.connect(core.ports.event);
    using plain = await LineClient.connect(core.ports.event);
    plain.sendRaw(line(1));
    await waitForEvents(core, 1);
    using forwarder = await LineClient.connect(core.ports.event);
    forwarder.send("EventStreamHello", { node_id: BIG_ID, acks: true });
    forwarder.sendRaw(line(2));
    expect(await forwarder.nextKind("EventAck")).toEqual({ seq: 1 });
    expect(await forwarder.nextKind("Error")).toEqual({ code: "idle_timeout", message: "nothing received for 600 ms; closing" });
    await forwarder.closed;
    // Longer than both limits later, the senders without a hello are still read.
    early.sendRaw(line(3));
    plain.sendRaw(line(4));
    await waitForEvents(core, 4);
  });

  test("a node's event stream closed for silence comes back quietly, and its next events are stored", async () => {
    const coreLog = captureLog("info");
    const nodeLog = captureLog("warn");
    await using core = await startTestCore({ idle_timeout_ms: 300 }, coreLog.logger);
    using dir = tempDir();
    const node = await startNode(
      { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: dir.path, name: "quiet-node", relay_port: 0, log_level: "warn", heartbeat_ms: 50, reconnect_min_ms: 10, reconnect_max_ms: 50 },
      nodeLog.logger,
    );
    try {
      await node.registered();
      using pot = await EventStreamClient.connect(node.ports.relay);
      pot.send(line(1).trim());
      await waitForEvents(core, 1);
      await until(() => coreLog.lines.some((l) => l.msg === "event connection silent for 300 ms; closed"), "Core closing the quiet stream");
      pot.send(line(2).trim());
      await waitForEvents(core, 2);
      await node.forwarder.drained();
      expect(nodeLog.lines.filter((l) => String(l.msg).startsWith("Core's event socket"))).toEqual([]);
    } finally {
      await node.stop();
    }
  });

  test("a connection that must authenticate and sends nothing is closed", async () => {
    await using core = await startTestCore({ node_enrollment_token: "enroll-secret", first_message_timeout_ms: 200 });
    using silent = await LineClient.connect(core.ports.event);
    await silent.closed;
    expect((await stats(core)).ingest).toMatchObject({ connections: 0 });
  });

  test("refusals past the per-address limit are logged rate-limited", async () => {
    const { lines, logger } = captureLog("info");
    await using core = await startTestCore({ max_connections_per_address: 1 }, logger);
    using held = await LineClient.connect(core.ports.event);
    held.sendRaw(line(1));
    await waitForEvents(core, 1);
    for (let i = 0; i < 20; i++) {
      using extra = await LineClient.connect(core.ports.event);
      expect(await extra.nextKind("Error")).toMatchObject({ code: "too_many_connections" });
      await extra.closed;
    }
    expect(lines.filter((l) => l.msg === "too many event connections from one address; refused")).toHaveLength(5);
  });
});
