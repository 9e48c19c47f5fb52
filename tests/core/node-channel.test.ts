import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { createLogger } from "../../src/log";
import { parseWithIds } from "../../src/protocol/json";
import { BIG_ID, LineClient, getJson, registerNode, startTestCore, until } from "../helpers";

/** A logger whose lines the test can read. */
function capture() {
  const lines: any[] = [];
  return { lines, logger: createLogger("info", { destination: { write: (s: string) => void lines.push(...s.split("\n").filter(Boolean).map((l) => JSON.parse(l))) } }) };
}

const registration = (extra: Record<string, unknown> = {}) => ({ node_id: 7n, node_name: "a", address: "10.0.0.5", port: 9001, node_type: "Agent", ...extra });

describe("node control channel", () => {
  test("registration is acknowledged and the node is listed with its exact u64 id", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core, BIG_ID, "sensor-eu-1");
    const list = await getJson(`${core.api}/api/v1/nodes`);
    expect(list.text).toContain('"node_id":18446744073709551557');
    expect(list.body).toEqual({ nodes: [{ node_id: BIG_ID, node_name: "sensor-eu-1", status: "Connected", node_type: "Full" }] });
    expect(node).toBeDefined();
  });

  test("status and pot updates show in all three endpoints", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const seen = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "PotStatusUpdate" && (m.payload as any).pot_id === "http-1" && seen.resolve());
    node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "http-1", pot_type: "honnypotter", status: "Installing" });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "http-1", pot_type: "honnypotter", status: "Stopped" });
    await seen.promise;
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes[0].status).toBe("Running");
    expect((await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`)).body).toEqual({
      node_id: BIG_ID,
      node_name: "sensor-1",
      status: "Running",
      node_type: "Full",
      location: null,
      address: "127.0.0.1",
      port: 0,
      last_seen: expect.any(String),
      // A plain heartbeat (no figures, as an older node sends): its time, and no health.
      last_heartbeat: expect.any(String),
      health: null,
      honeypots: [
        { pot_id: "ssh-1", pot_type: "cowrie", status: "Running" },
        { pot_id: "http-1", pot_type: "honnypotter", status: "Stopped" },
      ],
    });
    expect((await getJson(`${core.api}/api/v1/honeypots`)).body).toEqual({
      honeypots: [
        { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" },
        { node_id: BIG_ID, pot_id: "http-1", pot_type: "honnypotter", status: "Stopped" },
      ],
    });
  });

  test("node detail shows the address and port of the registration", async () => {
    await using core = await startTestCore();
    using claimed = await LineClient.connect(core.ports.node);
    claimed.send("NodeRegistration", registration());
    expect(await claimed.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    expect((await getJson(`${core.api}/api/v1/nodes/7`)).body).toEqual({ node_id: 7n, node_name: "a", status: "Connected", node_type: "Agent", location: null, address: "10.0.0.5", port: 9001, last_seen: expect.any(String), last_heartbeat: null, health: null, honeypots: [] });
    using bare = await LineClient.connect(core.ports.node);
    bare.send("NodeRegistration", { node_id: 8n, node_name: "b", node_type: "Full" });
    expect(await bare.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    expect((await getJson(`${core.api}/api/v1/nodes/8`)).body).toMatchObject({ address: "127.0.0.1", port: null });
  });

  test("tolerant framing: concatenated objects and all unit forms", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    node.sendRaw(
      '{"version":2,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","address":"x","port":1,"node_type":"Agent"}}}' +
        '{"version":2,"message":{"NodeStatusUpdate":{"node_id":7,"status":"Running"}}}\n',
    );
    expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 7n, accepted: true, message: "registered" });
    const dropped = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeDrop" && dropped.resolve());
    node.sendRaw('{"version":2,"message":{"NodeDrop":{}}}\n');
    await dropped.promise;
    expect((await getJson(`${core.api}/api/v1/nodes/7`)).body.status).toBe("Stopped");
    for (const form of ['"NodeDrop"', '{"NodeDrop":null}']) {
      using again = await registerNode(core, 7n, "a");
      const d = Promise.withResolvers<void>();
      const off = core.bus.subscribe((m) => m.kind === "NodeDrop" && d.resolve());
      again.sendRaw(`{"version":2,"message":${form}}\n`);
      await d.promise;
      off();
    }
  });

  test("a lost connection makes the node Unknown; its pots keep their status", async () => {
    await using core = await startTestCore();
    const node = await registerNode(core);
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
    const unknown = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && (m.payload as any).status === "Unknown" && unknown.resolve());
    node.close();
    await unknown.promise;
    expect((await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`)).body).toMatchObject({ status: "Unknown", honeypots: [{ pot_id: "ssh-1", status: "Running" }] });
  });

  test("missed heartbeats make the node Unknown", async () => {
    await using core = await startTestCore({ heartbeat_timeout_ms: 150 });
    using node = await registerNode(core);
    const unknown = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && (m.payload as any).status === "Unknown" && unknown.resolve());
    await unknown.promise;
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes[0].status).toBe("Unknown");
    node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
    const back = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && (m.payload as any).status === "Running" && back.resolve());
    await back.promise;
  });

  test("a peer that never writes a newline is answered as soon as its object is complete", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    node.sendRaw('{"version":2,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","address":"x","port":1,"node_type":"Agent"}}');
    node.sendRaw("}");
    expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 7n, accepted: true, message: "registered" });
    node.sendRaw('{"version":2,"message":{"NodeStatusUpdate":{"node_id":7,"status":"Running"}}}');
    node.sendRaw('{"version":2,"message":{"Nope":{}}}');
    expect(await node.nextKind("Error")).toMatchObject({ code: "unknown_kind" });
    expect((await getJson(`${core.api}/api/v1/nodes/7`)).body.status).toBe("Running");
  });

  test("the upstream example node's version-1 registration, without a newline, is refused clearly", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    // What its Python example writes: json.dumps of the envelope, then the status, no newlines.
    node.sendRaw('{"version": 1, "message": {"NodeRegistration": {"node_id": 5, "node_name": "python-node-5", "address": "0.0.0.0", "port": 8080, "node_type": "Agent"}}}');
    expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 5n, accepted: false, message: "unsupported protocol version 1; this Core speaks version 2" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "unsupported_version" });
  });

  test("a version-1 node that writes on after its registration reads the whole refusal and an orderly end, not a reset", async () => {
    await using core = await startTestCore();
    const socket = connect({ port: core.ports.node, host: "127.0.0.1" });
    const seen: string[] = [];
    let text = "";
    const closed = Promise.withResolvers<void>();
    socket.on("connect", () => {
      socket.write('{"version":1,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","node_type":"Full"}}}\n');
      // More than Core reads in one go: unread when it closed, they made its kernel send a reset.
      socket.write('{"version":1,"message":{"NodeStatusUpdate":{"node_id":7,"status":"Running"}}}\n'.repeat(16_384));
    });
    socket.on("data", (d) => void (text += d));
    socket.on("end", () => seen.push("end"));
    socket.on("error", (e: NodeJS.ErrnoException) => seen.push(e.code ?? e.message));
    socket.on("close", () => closed.resolve());
    await closed.promise;
    const message = "unsupported protocol version 1; this Core speaks version 2";
    expect({ seen, lines: text.trimEnd().split("\n").map((l) => parseWithIds(l)) }).toEqual({
      seen: ["end"],
      lines: [
        { version: 2, message: { RegistrationAck: { node_id: 7n, accepted: false, message } } },
        { version: 2, message: { Error: { code: "unsupported_version", message } } },
      ],
    });
  });

  test("a second registration of the same id replaces the old connection", async () => {
    await using core = await startTestCore();
    const first = await registerNode(core);
    using second = await registerNode(core);
    expect(await first.nextKind("Error")).toMatchObject({ code: "closed" });
    await first.closed;
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes).toHaveLength(1);
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes[0].status).toBe("Connected");
    expect(second).toBeDefined();
  });
});

describe("node control channel: bad input", () => {
  test("unparsable JSON is answered and the connection goes on", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    node.sendRaw("this is not json\n");
    expect(await node.nextKind("Error")).toMatchObject({ code: "bad_json" });
    node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
    node.sendRaw("[1,2]\n");
    expect(await node.nextKind("Error")).toMatchObject({ code: "bad_envelope" });
  });

  test("a bad object written back to back with a registration costs one Error; the registration is answered", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    node.sendRaw('{x}{"version":2,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","address":"x","port":1,"node_type":"Agent"}}}\n');
    expect(await node.nextKind("Error")).toMatchObject({ code: "bad_json" });
    expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 7n, accepted: true, message: "registered" });
  });

  test("a 1 MB garbage object is refused once, while another connection keeps being served", async () => {
    await using core = await startTestCore();
    using bystander = await registerNode(core, 99n, "bystander");
    using node = await LineClient.connect(core.ports.node);
    node.sendRaw("{" + "x".repeat(1_000_000) + "}\n");
    bystander.sendRaw("[1,2]\n");
    expect(await bystander.nextKind("Error")).toMatchObject({ code: "bad_envelope" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "bad_json", message: "message is not valid JSON (1000002 bytes)" });
    node.send("NodeRegistration", { node_id: 5n, node_name: "after", address: "x", port: 1, node_type: "Full" });
    expect(await node.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
  }, 20_000);

  test("a wrong version is answered; a registration with it is refused", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    node.sendRaw('{"version":1,"message":{"NodeRegistration":{"node_id":5,"node_name":"old","address":"x","port":1,"node_type":"Full"}}}\n');
    expect(await node.nextKind("RegistrationAck")).toMatchObject({ node_id: 5n, accepted: false, message: expect.stringContaining("version 1") });
    expect(await node.nextKind("Error")).toMatchObject({ code: "unsupported_version" });
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes).toEqual([]);
  });

  test("anything before a registration is refused with a reason", async () => {
    await using core = await startTestCore();
    using node = await LineClient.connect(core.ports.node);
    node.send("PotStatusUpdate", { node_id: 1n, pot_id: "p", pot_type: "cowrie", status: "Running" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "not_registered" });
    expect((await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots).toEqual([]);
  });

  test("an oversized message is refused and neither this nor another connection suffers", async () => {
    await using core = await startTestCore({ max_message_bytes: 4096 });
    using bystander = await registerNode(core, 99n, "bystander");
    using node = await registerNode(core);
    node.sendRaw('{"version":2,"message":{"PotEvent":{"pad":"' + "x".repeat(10_000) + '"}}}\n');
    expect(await node.nextKind("Error")).toMatchObject({ code: "message_too_large" });
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "after", pot_type: "cowrie", status: "Running" });
    bystander.send("PotStatusUpdate", { node_id: 99n, pot_id: "other", pot_type: "cowrie", status: "Running" });
    const pots = await until(async () => {
      const body = (await getJson(`${core.api}/api/v1/honeypots`)).body;
      return body.honeypots.length === 2 && body.honeypots;
    }, "both pots");
    expect(pots.map((p: any) => p.pot_id).sort()).toEqual(["after", "other"]);
  });

  test("invalid payloads and another node's id are refused", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "p" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "invalid_payload" });
    node.send("NodeStatusUpdate", { node_id: 1n, status: "Running" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "node_id_mismatch" });
  });

  test("node fields are checked against the protocol's enums and sizes", async () => {
    const log = capture();
    await using core = await startTestCore({}, log.logger);
    const refusals: [Record<string, unknown>, string][] = [
      [{ node_type: "x".repeat(500_000) }, 'invalid NodeRegistration: /node_type: must be one of Full, Agent, got "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"... (500000 characters)'],
      [{ node_type: "full" }, 'invalid NodeRegistration: /node_type: must be one of Full, Agent, got "full"'],
      [{ address: "a".repeat(257) }, "invalid NodeRegistration: /address: Expected string length less or equal to 256"],
      [{ port: 70000 }, "invalid NodeRegistration: /port: Expected integer to be less or equal to 65535"],
      [{ node_name: "" }, "invalid NodeRegistration: /node_name: Expected string length greater or equal to 1"],
    ];
    for (const [extra, message] of refusals) {
      using node = await LineClient.connect(core.ports.node);
      node.send("NodeRegistration", registration(extra));
      expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 7n, accepted: false, message });
      expect(await node.nextKind("Error")).toEqual({ code: "invalid_payload", message });
      await node.closed;
    }
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes).toEqual([]);

    using node = await LineClient.connect(core.ports.node);
    node.send("NodeRegistration", registration());
    expect(await node.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    const bad: [string, Record<string, unknown>, string][] = [
      ["NodeStatusUpdate", { node_id: 7n, status: "Pwned" }, '/status: must be one of Connected, Deploying, Running, Stopped, Failed, Unknown, got "Pwned"'],
      ["PotStatusUpdate", { node_id: 7n, pot_id: "p", pot_type: "cowrie", status: "running" }, '/status: must be one of Installing, Running, Stopped, Failed, got "running"'],
      ["PotStatusUpdate", { node_id: 7n, pot_id: "../etc", pot_type: "cowrie", status: "Running" }, "/pot_id: Expected string to match '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'"],
      ["PotStatusUpdate", { node_id: 7n, pot_id: "p", pot_type: "c".repeat(65), status: "Running" }, "/pot_type: Expected string length less or equal to 64"],
    ];
    for (const [kind, payload, where] of bad) {
      node.send(kind, payload);
      expect(await node.nextKind("Error")).toEqual({ code: "invalid_payload", message: `invalid ${kind}: ${where}` });
    }
    expect((await getJson(`${core.api}/api/v1/nodes/7`)).body).toMatchObject({ status: "Connected", node_type: "Agent", honeypots: [] });
    // Each refusal was logged, with the peer's address and the reason.
    const logged = log.lines.filter((l) => l.msg?.includes("Pwned") || l.msg?.includes("node_type"));
    expect(logged.map((l) => [l.level, l.remote])).toEqual([[40, "127.0.0.1"], [40, "127.0.0.1"], [40, "127.0.0.1"]]);
  });

  test("every refused registration is acknowledged with the reason, then the connection is closed", async () => {
    await using core = await startTestCore({ node_enrollment_token: "enroll-secret", auth_failures_per_minute: 100 });
    const cases: [string, string, string][] = [
      ["version 1", '{"version":1,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","node_type":"Full"}}}\n', "unsupported_version"],
      ["an invalid field", '{"version":2,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","node_type":"Bogus"}}}\n', "invalid_payload"],
      ["no enrollment token", '{"version":2,"message":{"NodeRegistration":{"node_id":7,"node_name":"a","node_type":"Full"}}}\n', "unauthenticated"],
    ];
    for (const [what, line, code] of cases) {
      using node = await LineClient.connect(core.ports.node);
      node.sendRaw(line);
      const ack = await node.nextKind("RegistrationAck");
      expect({ what, accepted: ack.accepted, node_id: ack.node_id }).toEqual({ what, accepted: false, node_id: 7n });
      expect(await node.nextKind("Error")).toMatchObject({ code, message: ack.message });
      await node.closed;
    }
    // A registered connection that registers as another node.
    using node = await LineClient.connect(core.ports.node);
    node.send("NodeRegistration", registration({ enrollment_token: "enroll-secret" }));
    expect(await node.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    node.send("NodeRegistration", registration({ node_id: 8n, enrollment_token: "enroll-secret" }));
    expect(await node.nextKind("RegistrationAck")).toEqual({ node_id: 8n, accepted: false, message: "this connection is already registered as node 7" });
    expect(await node.nextKind("Error")).toMatchObject({ code: "already_registered" });
    await node.closed;
  });
});

describe("node control channel: idle connections", () => {
  test("a connection that never registers is closed; a node that keeps sending heartbeats is not, a silent one is", async () => {
    await using core = await startTestCore({ first_message_timeout_ms: 200, idle_timeout_ms: 800 });
    using silent = await LineClient.connect(core.ports.node);
    using busy = await registerNode(core, 1n, "busy");
    using quiet = await registerNode(core, 2n, "quiet");
    const beat = setInterval(() => busy.send("NodeStatusUpdate", { node_id: 1n, status: "Running" }), 100);
    try {
      expect(await silent.nextKind("Error")).toEqual({ code: "idle_timeout", message: "no NodeRegistration within 200 ms; closing" });
      await silent.closed;
      expect(await quiet.nextKind("Error")).toEqual({ code: "idle_timeout", message: "nothing received for 800 ms; closing" });
      await quiet.closed;
      // The node that kept sending heartbeats is still served.
      busy.sendRaw("[1,2]\n");
      expect(await busy.nextKind("Error")).toMatchObject({ code: "bad_envelope" });
      expect((await getJson(`${core.api}/api/v1/nodes/2`)).body.status).toBe("Unknown");
    } finally {
      clearInterval(beat);
    }
  });

  test("refusals past the per-address limit are answered, and logged rate-limited", async () => {
    const log = capture();
    await using core = await startTestCore({ max_connections_per_address: 2 }, log.logger);
    using a = await registerNode(core, 1n, "a");
    using b = await registerNode(core, 2n, "b");
    for (let i = 0; i < 20; i++) {
      using extra = await LineClient.connect(core.ports.node);
      expect(await extra.nextKind("Error")).toMatchObject({ code: "too_many_connections" });
      await extra.closed;
    }
    const warned = log.lines.filter((l) => l.msg === "too many node connections from one address; refused");
    expect(warned.length).toBe(5);
    expect([a, b]).toHaveLength(2);
  });
});
