import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { startStandaloneProxy } from "../../src/core/proxy/standalone";
import { silentLogger } from "../../src/log";
import { Security } from "../../src/core/auth";
import { defaultCoreConfig } from "../../src/config";
import { parseWithIds, stringify } from "../../src/protocol/json";
import { join } from "node:path";
import { BIG_ID, EventStreamClient, WsClient, getJson, registerNode, startTestCore, tempDir, until } from "../helpers";

const event = (i: number, over: Record<string, unknown> = {}) => ({
  id: i,
  node_id: BIG_ID,
  pot_id: "ssh-1",
  pot_type: "cowrie",
  event_type: "cowrie.login.failed",
  timestamp: "2026-11-22T01:07:41.947Z",
  src_ip: "203.0.113.7",
  data: { username: "root", password: String(i) },
  ...over,
});

describe("live feed", () => {
  test("every kind of message reaches clients on / and /ws as Protocol v2 frames", async () => {
    await using core = await startTestCore();
    using a = await WsClient.connect(core.ws);
    using b = await WsClient.connect(`${core.ws}/ws`);
    const node = await registerNode(core);
    node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
    node.send("NodeEvent", { Alarm: { description: "disk almost full" } });
    node.send("CommandResult", { command_id: "c-1", node_id: BIG_ID, ok: true, message: "done" });
    core.bus.publish("PotEvent", event(1), { node_id: BIG_ID, pot_id: "ssh-1", event_type: "cowrie.login.failed" });
    node.send("NodeDrop", null);
    for (const c of [a, b]) {
      expect(await c.nextKind("NodeRegistration")).toMatchObject({ node_id: BIG_ID, node_name: "sensor-1", node_type: "Full" });
      expect(await c.nextKind("NodeStatusUpdate")).toEqual({ node_id: BIG_ID, status: "Running" });
      expect(await c.nextKind("PotStatusUpdate")).toEqual({ node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
      expect(await c.nextKind("CommandResult")).toEqual({ command_id: "c-1", node_id: BIG_ID, ok: true, message: "done" });
      expect(await c.nextKind("PotEvent")).toEqual(event(1));
      expect(await c.next((m) => m.message === "NodeDrop")).toEqual({ version: 2, message: "NodeDrop" });
    }
  });

  // Both writer channels: the writer's own thread (a file) and inline (:memory:).
  test.each(["the writer's own thread", "an inline writer"])("ingested events reach the feed as REST shows them (committed by %s): exact u64s, data parsed and written again, geo", async (where) => {
    using dir = tempDir();
    await using core = await startTestCore({ db: where === "the writer's own thread" ? join(dir.path, "core.db") : ":memory:" });
    const frames: string[] = [];
    const ws = new WebSocket(`${core.ws}/?kinds=PotEvent`);
    await new Promise((r) => (ws.onopen = r));
    ws.onmessage = (e) => frames.push(e.data as string);
    const events = await EventStreamClient.connect(core.ports.event);
    // The fast path keeps data as sent: spaces, escapes, a repeated key, a nested u64, non-ASCII.
    const lines = [
      '{"eventid": "cowrie.login.failed", "src_ip": "8.8.8.8", "session": "abc123", "username": "r\u00f6ot", "password": "x", "password": "y", "timestamp": "2026-11-22T01:07:41.947Z"}',
      `{"eventid":"custom.note","src_ip":"198.51.100.9","note":"zoë ✓","inner":{"node_id":${BIG_ID}},"big":12345678901234567890,"timestamp":"2026-11-22T01:07:42Z"}`,
    ];
    events.send(lines);
    await until(() => frames.length === 2, "two frames");
    ws.close();
    const page = (await getJson(`${core.api}/api/v1/events?limit=2`)).text;
    const rest = (parseWithIds(page) as { events: unknown[] }).events.reverse();
    for (const [i, frame] of frames.entries()) {
      // The frame is the event REST lists, in the same canonical text (no spaces, no repeated keys).
      expect(parseWithIds(frame)).toEqual({ version: 2, message: { PotEvent: rest[i] } });
      expect(frame).toBe(stringify(parseWithIds(frame)));
    }
    expect((rest[0] as any).data.password).toBe("y");
    expect((rest[0] as any).geo?.country).toBe("US");
    expect((rest[1] as any).data.inner.node_id).toBe(BIG_ID);
    expect(frames[1]).toContain('"note":"zoë ✓"');
  });

  test("filters narrow what a client gets", async () => {
    await using core = await startTestCore();
    using byType = await WsClient.connect(`${core.ws}/?event_type=cowrie.login.success`);
    using byPot = await WsClient.connect(`${core.ws}/?pot_id=http-1`);
    using byNode = await WsClient.connect(`${core.ws}/?node_id=7&kinds=PotEvent`);
    using statusOnly = await WsClient.connect(`${core.ws}/?kinds=PotStatusUpdate`);
    const publish = (e: ReturnType<typeof event>) => core.bus.publish("PotEvent", e, { node_id: e.node_id as bigint, pot_id: e.pot_id, event_type: e.event_type });
    publish(event(1));
    publish(event(2, { event_type: "cowrie.login.success" }));
    publish(event(3, { pot_id: "http-1", event_type: "honnypotter.login.failed" }));
    publish(event(4, { node_id: 7n }));
    core.bus.publish("PotStatusUpdate", { node_id: BIG_ID, pot_id: "http-1", pot_type: "honnypotter", status: "Running" }, { node_id: BIG_ID, pot_id: "http-1" });
    publish(event(5, { node_id: 7n, pot_id: "http-1", event_type: "cowrie.login.success" }));

    expect((await byType.nextKind("PotEvent")).id).toBe(2);
    expect((await byType.nextKind("PotEvent")).id).toBe(5);
    expect((await byPot.nextKind("PotEvent")).id).toBe(3);
    expect(await byPot.nextKind("PotStatusUpdate")).toMatchObject({ pot_id: "http-1" });
    expect((await byPot.nextKind("PotEvent")).id).toBe(5);
    expect((await byNode.nextKind("PotEvent")).id).toBe(4);
    expect((await byNode.nextKind("PotEvent")).id).toBe(5);
    expect(await statusOnly.nextKind("PotStatusUpdate")).toMatchObject({ pot_id: "http-1" });
    // Each saw nothing else: the last message of each is the one above.
    expect([byType.pending, byPot.pending, byNode.pending, statusOnly.pending]).toEqual([[], [], [], []]);
  });

  test("a bad filter is refused with 400", async () => {
    await using core = await startTestCore();
    const res = await fetch(`http://127.0.0.1:${core.ports.ws}/?kinds=Nope`, { headers: { upgrade: "websocket", connection: "upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.message).toContain("unknown kinds Nope");
  });

  test("a client that does not read is cut off; the others get everything", async () => {
    await using core = await startTestCore({ ws_backpressure_bytes: 64 * 1024 });
    using reader = await WsClient.connect(`${core.ws}/?kinds=PotEvent`);
    // A raw TCP client that completes the handshake and then never reads.
    const slow = connect(core.ports.ws, "127.0.0.1");
    const upgraded = Promise.withResolvers<void>();
    slow.once("data", () => {
      slow.pause();
      upgraded.resolve();
    });
    slow.write(
      "GET /?kinds=PotEvent HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await upgraded.promise;
    const big = "x".repeat(16 * 1024);
    // Publish in steps the reader keeps up with; the slow client's backlog only grows.
    let sent = 0;
    let received = 0;
    while (core.proxy.cutOff === 0 && sent < 10_000) {
      for (let i = 0; i < 4; i++, sent++) core.bus.publish("PotEvent", event(sent, { data: { pad: big } }), { node_id: BIG_ID, pot_id: "ssh-1", event_type: "cowrie.login.failed" });
      while (received < sent) expect((await reader.nextKind("PotEvent")).id).toBe(received++);
    }
    expect(core.proxy.cutOff).toBe(1);
    expect(core.proxy.clients).toBe(1);
    core.bus.publish("PotEvent", event(sent), { node_id: BIG_ID, pot_id: "ssh-1", event_type: "cowrie.login.failed" });
    expect((await reader.nextKind("PotEvent")).id).toBe(sent);
    slow.destroy();
  });
});

describe("proxy as its own process", () => {
  test("fed from Core's backend stream, commands through Core's REST", async () => {
    await using core = await startTestCore();
    const proxy = startStandaloneProxy({ backend: `ws://127.0.0.1:${core.ports.api}`, host: "127.0.0.1", port: 0, maxMessageBytes: 1 << 20, backpressureBytes: 1 << 22, security: new Security(defaultCoreConfig()), logger: silentLogger() });
    try {
      await proxy.connected();
      using client = await WsClient.connect(`ws://127.0.0.1:${proxy.port}/?node_id=${BIG_ID}`);
      using node = await registerNode(core);
      expect(await client.nextKind("NodeRegistration")).toMatchObject({ node_id: BIG_ID });
      node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
      expect(await client.nextKind("PotStatusUpdate")).toEqual({ node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
      client.send({ node_id: BIG_ID, command: { StopPot: "ssh-1" } });
      const ack = await client.nextKind("CommandAck");
      expect(ack).toMatchObject({ node_id: BIG_ID, accepted: true });
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command: { StopPot: "ssh-1" }, command_id: ack.command_id });
      node.send("CommandResult", { command_id: ack.command_id, node_id: BIG_ID, ok: true, message: "ssh-1 is Stopped" });
      expect(await client.nextKind("CommandResult")).toEqual({ command_id: ack.command_id, node_id: BIG_ID, ok: true, message: "ssh-1 is Stopped" });
      // The commands beyond the first set, and the answer's data, pass through the second process too.
      client.send({ node_id: BIG_ID, command: { GetPotLogs: "ssh-1" } });
      const logs = await client.nextKind("CommandAck");
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command: { GetPotLogs: "ssh-1" }, command_id: logs.command_id });
      const data = { pot_id: "ssh-1", stdout: ["ready"], stderr: [], install: ["# installed"] };
      node.send("CommandResult", { command_id: logs.command_id, node_id: BIG_ID, ok: true, message: "last lines of ssh-1", data });
      expect(await client.nextKind("CommandResult")).toEqual({ command_id: logs.command_id, node_id: BIG_ID, ok: true, message: "last lines of ssh-1", data });
      client.send({ node_id: BIG_ID, command: { UpdateConfig: { log_level: "loud" } } });
      expect(await client.nextKind("CommandAck")).toMatchObject({ accepted: false, message: expect.stringMatching(/^invalid_argument: invalid argument for UpdateConfig: \/UpdateConfig\/log_level expected one of/) });
      client.send({ node_id: 5, command: { StopPot: "ssh-1" } });
      expect(await client.nextKind("CommandAck")).toMatchObject({ accepted: false, message: "not_found: node 5 is not registered" });
    } finally {
      proxy.stop();
    }
  });
});

test("`honeybee proxy --backend` as its own process relays the live feed", async () => {
  await using core = await startTestCore();
  const { BUN, ROOT } = await import("../helpers");
  const proc = Bun.spawn([BUN, `${ROOT}/src/main.ts`, "proxy", "--backend", `ws://127.0.0.1:${core.ports.api}`, "--ws-port", "0", "--log-level", "info"], { stdout: "pipe", stderr: "pipe" });
  try {
    const reader = proc.stdout.getReader();
    let text = "";
    let port = 0;
    let connected = false;
    // Its log says where it listens, and when the backend stream is up.
    while (!port || !connected) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`proxy exited: ${text}${await new Response(proc.stderr).text()}`);
      text += new TextDecoder().decode(value);
      for (const line of text.split("\n")) {
        if (line.includes('"proxy started"')) port = JSON.parse(line).port;
        if (line.includes("connected to Core's backend stream")) connected = true;
      }
    }
    using client = await WsClient.connect(`ws://127.0.0.1:${port}/?kinds=NodeRegistration`);
    using node = await registerNode(core);
    expect(await client.nextKind("NodeRegistration")).toMatchObject({ node_id: BIG_ID, node_name: "sensor-1" });
    expect(node).toBeDefined();
  } finally {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }
});
