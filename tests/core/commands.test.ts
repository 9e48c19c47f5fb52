import { describe, expect, test } from "bun:test";
import { BIG_ID, WsClient, getJson, registerNode, startTestCore } from "../helpers";

const INSTALL = { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: "2222", telnet_port: "2223", hostname: "db-prod-2", log_path: "log" }, auto_start: true };
const COMMANDS = [{ InstallPot: INSTALL }, { DeployPot: "ssh-01" }, { StopPot: "ssh-01" }, { RestartPot: "ssh-01" }, { GetPotStatus: "ssh-01" }];
/** The upstream command set (H0neyBe/honeybee_node) and this project's RemovePot, as each door must pass them on. */
const ALL_COMMANDS = [
  { Restart: null },
  { UpdateConfig: null },
  { UpdateConfig: { log_level: "debug", heartbeat_ms: 10000, spool_max_bytes: 1048576 } },
  { InstallPot: INSTALL },
  { DeployPot: "ssh-01" },
  { GetPotStatus: "ssh-01" },
  { RestartPot: "ssh-01" },
  { StopPot: "ssh-01" },
  { GetPotLogs: "ssh-01" },
  { GetPotMetrics: "ssh-01" },
  { GetPotInfo: "ssh-01" },
  { GetInstalledPots: null },
  { RemovePot: "ssh-01" },
];
/** Shapes every door refuses, with the code it names. */
const INVALID: [unknown, string][] = [
  [{ GetPotLogs: 5 }, "invalid_argument"],
  [{ GetPotMetrics: "../etc" }, "invalid_argument"],
  [{ RemovePot: "" }, "invalid_argument"],
  [{ RemovePot: null }, "invalid_argument"],
  [{ UpdateConfig: { log_level: "loud" } }, "invalid_argument"],
  [{ UpdateConfig: { heartbeat_ms: 0 } }, "invalid_argument"],
  [{ UpdateConfig: { colour: "red" } }, "invalid_argument"],
  [{ UpdateConfig: "fast" }, "invalid_argument"],
  [{ Restart: { now: true } }, "invalid_argument"],
  [{ Shutdown: null }, "unknown_command"],
  [{ GetPotLogs: "a", RemovePot: "b" }, "bad_command"],
];

const post = (core: { api: string }, nodeId: bigint | string, body: unknown) =>
  getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("commands through REST", () => {
  test("each command reaches the node exactly as docs/protocol.md shapes it, plus a command_id", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    for (const command of COMMANDS) {
      const res = await post(core, BIG_ID, command);
      expect(res.status).toBe(202);
      const sent = await node.nextKind("NodeCommand");
      expect(sent).toEqual({ node_id: BIG_ID, command, command_id: res.body.command_id });
    }
  });

  test("all twelve commands, and the unit forms of those without an argument, reach the node", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    for (const command of ALL_COMMANDS) {
      const res = await post(core, BIG_ID, command);
      expect({ command, status: res.status }).toEqual({ command, status: 202 });
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command, command_id: res.body.command_id });
    }
    for (const [unit, name] of [['"UpdateConfig"', "UpdateConfig"], [{ UpdateConfig: {} }, "UpdateConfig"], ['"GetInstalledPots"', "GetInstalledPots"], [{ Restart: {} }, "Restart"]] as const) {
      const res = await post(core, BIG_ID, unit);
      expect(res.status).toBe(202);
      expect((await node.nextKind("NodeCommand")).command).toEqual({ [name]: null });
    }
  });

  test("invalid shapes of the new commands are refused with the code that names the problem", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    for (const [body, code] of INVALID) {
      const res = await post(core, BIG_ID, body);
      expect({ body, status: res.status, code: res.body.error.code }).toEqual({ body, status: 400, code });
    }
    expect((await post(core, BIG_ID, { UpdateConfig: { log_level: "loud" } })).body.error.message).toBe(
      "invalid argument for UpdateConfig: /UpdateConfig/log_level expected one of fatal, error, warn, info, debug, trace, silent",
    );
    expect(node).toBeDefined();
  });

  test("CommandResult.data is stored with the record and published with the result", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const { body } = await post(core, BIG_ID, { GetPotMetrics: "ssh-01" });
    const data = { pot_id: "ssh-01", status: "Running", pid: 4242, uptime_s: 12.5, cpu_seconds: 0.4, cpu_percent: 3.2, rss_bytes: 52428800, processes: 2, restarts: 0, events_relayed: 17 };
    const seen = Promise.withResolvers<any>();
    core.bus.subscribe((m) => m.kind === "CommandResult" && seen.resolve(m.payload));
    node.send("CommandResult", { command_id: body.command_id, node_id: BIG_ID, ok: true, message: "ssh-01 is Running", data });
    expect(await seen.promise).toEqual({ command_id: body.command_id, node_id: BIG_ID, ok: true, message: "ssh-01 is Running", data });
    expect((await getJson(`${core.api}/api/v1/commands/${body.command_id}`)).body).toMatchObject({ status: "succeeded", message: "ssh-01 is Running", data });
  });

  test("a succeeded RemovePot removes the pot from the registry; a failed one or another node's does not", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    using other = await registerNode(core, 7n, "sensor-7");
    const pots = async () => (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots.map((p: any) => `${p.node_id}/${p.pot_id}`).sort();
    const seen: string[] = [];
    const waiters: { n: number; resolve: () => void }[] = [];
    core.bus.subscribe((m) => {
      if (m.kind !== "PotStatusUpdate" && m.kind !== "CommandResult") return;
      seen.push(m.kind);
      for (const w of waiters.filter((w) => seen.length >= w.n)) w.resolve();
    });
    const published = (n: number) => new Promise<void>((resolve) => (seen.length >= n ? resolve() : waiters.push({ n, resolve })));
    const status = (n: typeof node, id: bigint, pot: string) => n.send("PotStatusUpdate", { node_id: id, pot_id: pot, pot_type: "cowrie", status: "Failed", message: "install failed" });
    status(node, BIG_ID, "ssh-01");
    status(node, BIG_ID, "ssh-02");
    status(other, 7n, "ssh-01");
    await published(3);
    const refused = (await post(core, BIG_ID, { RemovePot: "ssh-02" })).body.command_id;
    node.send("CommandResult", { command_id: refused, node_id: BIG_ID, ok: false, message: "disk on fire" });
    await published(4);
    // Another node cannot close this node's RemovePot: its result is ignored, and not published.
    const removed = (await post(core, BIG_ID, { RemovePot: "ssh-01" })).body.command_id;
    other.send("CommandResult", { command_id: removed, node_id: 7n, ok: true, message: "removed" });
    node.send("CommandResult", { command_id: removed, node_id: BIG_ID, ok: true, message: "removed ssh-01 and its files", data: { pot_id: "ssh-01", removed: true } });
    await published(5);
    expect((await getJson(`${core.api}/api/v1/commands/${removed}`)).body).toMatchObject({ status: "succeeded", message: "removed ssh-01 and its files" });
    expect(await pots()).toEqual([`${BIG_ID}/ssh-02`, "7/ssh-01"]);
    expect((await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`)).body.honeypots.map((p: any) => p.pot_id)).toEqual(["ssh-02"]);
  });

  test("OpenAPI: the body is one of the command shapes, with an example of each, and this operation's own error examples", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const op = (await getJson(`${core.api}/swagger/json`)).body.paths["/api/v1/nodes/{node_id}/commands"].post;
    const body = op.requestBody.content["application/json"];
    expect(Object.keys(op.requestBody.content)).toEqual(["application/json"]);
    const names = body.schema.anyOf.map((s: any) => Object.keys(s.properties)[0]).sort();
    expect(names).toEqual(ALL_COMMANDS.map((c) => Object.keys(c)[0]).filter((n, i, a) => a.indexOf(n) === i).sort());
    expect(Object.keys(body.examples).sort()).toEqual(names);
    // Every example is a body the operation accepts.
    for (const [name, ex] of Object.entries<any>(body.examples)) {
      const res = await post(core, BIG_ID, ex.value);
      expect({ name, status: res.status }).toEqual({ name, status: 202 });
      expect((await node.nextKind("NodeCommand")).command).toEqual(ex.value);
    }
    // Every error example is what the operation answers.
    const example = (status: number) => op.responses[status].content["application/json"].example;
    expect((await post(core, BIG_ID, { DeployPot: "../x" })).body).toEqual(example(400));
    expect((await post(core, 42n, { DeployPot: "ssh-01" })).body).toEqual(example(404));
    const gone = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && (m.payload as any).status === "Unknown" && gone.resolve());
    node.close();
    await gone.promise;
    expect((await post(core, BIG_ID, { DeployPot: "ssh-01" })).body).toEqual(example(409));
  });

  test("the node's CommandResult closes the record", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const { body } = await post(core, BIG_ID, { DeployPot: "ssh-01" });
    expect((await getJson(`${core.api}/api/v1/commands/${body.command_id}`)).body).toMatchObject({ command_id: body.command_id, status: "sent", command: "DeployPot", pot_id: "ssh-01", source: "rest" });
    const done = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "CommandResult" && done.resolve());
    node.send("CommandResult", { command_id: body.command_id, node_id: BIG_ID, ok: false, message: "ssh-01: port 2222 is already in use" });
    await done.promise;
    expect((await getJson(`${core.api}/api/v1/commands/${body.command_id}`)).body).toMatchObject({
      node_id: BIG_ID,
      status: "failed",
      message: "ssh-01: port 2222 is already in use",
      body: { DeployPot: "ssh-01" },
      remote_addr: "127.0.0.1",
    });
  });

  test("errors: unknown command, malformed argument, unknown node, node not connected", async () => {
    await using core = await startTestCore();
    const cases: [unknown, number, string][] = [
      [{ Launch: "x" }, 400, "unknown_command"],
      [{ InstallPot: { pot_id: "a" } }, 400, "invalid_argument"],
      [{ InstallPot: { ...INSTALL, config: { ssh_port: 2222 } } }, 400, "invalid_argument"],
      [{ InstallPot: { ...INSTALL, pot_id: "../etc" } }, 400, "invalid_argument"],
      [{ DeployPot: 5 }, 400, "invalid_argument"],
      [{ DeployPot: "a", StopPot: "b" }, 400, "bad_command"],
      ["{not json", 400, "bad_json"],
    ];
    using node = await registerNode(core);
    for (const [body, status, code] of cases) {
      const res = await post(core, BIG_ID, body);
      expect({ body, status: res.status, code: res.body.error.code }).toEqual({ body, status, code });
    }
    expect((await post(core, 42n, { DeployPot: "a" })).body.error).toEqual({ code: "not_found", message: "node 42 is not registered" });
    expect((await post(core, "nope", { DeployPot: "a" })).status).toBe(400);
    const unknown = Promise.withResolvers<void>();
    core.bus.subscribe((m) => m.kind === "NodeStatusUpdate" && (m.payload as any).status === "Unknown" && unknown.resolve());
    node.close();
    await unknown.promise;
    const gone = await post(core, BIG_ID, { DeployPot: "a" });
    expect(gone.status).toBe(409);
    expect(gone.body.error.code).toBe("node_not_connected");
  });

  test("records are listed newest first with filters and a cursor", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const ids: string[] = [];
    for (const c of [...COMMANDS, ...COMMANDS]) ids.push((await post(core, BIG_ID, c)).body.command_id);
    const page1 = (await getJson(`${core.api}/api/v1/commands?limit=4`)).body;
    const page2 = (await getJson(`${core.api}/api/v1/commands?limit=4&cursor=${page1.next_cursor}`)).body;
    const page3 = (await getJson(`${core.api}/api/v1/commands?limit=4&cursor=${page2.next_cursor}`)).body;
    expect([...page1.commands, ...page2.commands, ...page3.commands].map((c: any) => c.command_id)).toEqual(ids.reverse());
    expect(page3.next_cursor).toBeNull();
    const deploys = (await getJson(`${core.api}/api/v1/commands?command=DeployPot&node_id=${BIG_ID}`)).body.commands;
    expect(deploys.map((c: any) => c.command)).toEqual(["DeployPot", "DeployPot"]);
    expect(node).toBeDefined();
  });
});

describe("commands through the WebSocket proxy", () => {
  test("with and without the envelope, answered with CommandAck on the same socket", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    using ws = await WsClient.connect(core.ws);
    for (const command of COMMANDS) {
      ws.send({ node_id: BIG_ID, command });
      const ack = await ws.nextKind("CommandAck");
      expect(ack).toMatchObject({ node_id: BIG_ID, accepted: true });
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command, command_id: ack.command_id });
      ws.send({ version: 2, message: { NodeCommand: { node_id: BIG_ID, command } } });
      const ack2 = await ws.nextKind("CommandAck");
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command, command_id: ack2.command_id });
    }
    const rec = (await getJson(`${core.api}/api/v1/commands?limit=1`)).body.commands[0];
    expect(rec).toMatchObject({ source: "ws", remote_addr: "127.0.0.1" });
  });

  test("all twelve commands pass; invalid shapes are refused with a CommandAck naming the problem", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    using ws = await WsClient.connect(core.ws);
    for (const command of ALL_COMMANDS) {
      ws.send({ node_id: BIG_ID, command });
      const ack = await ws.nextKind("CommandAck");
      expect({ command, accepted: ack.accepted }).toEqual({ command, accepted: true });
      expect(await node.nextKind("NodeCommand")).toEqual({ node_id: BIG_ID, command, command_id: ack.command_id });
    }
    for (const [command, code] of INVALID) {
      ws.send({ node_id: BIG_ID, command });
      const ack = await ws.nextKind("CommandAck");
      expect({ command, accepted: ack.accepted, code: ack.message.split(":")[0] }).toEqual({ command, accepted: false, code });
    }
  });

  test("refusals come back as CommandAck accepted:false with the reason", async () => {
    await using core = await startTestCore();
    using ws = await WsClient.connect(core.ws);
    ws.send({ node_id: 42, command: { DeployPot: "a" } });
    expect(await ws.nextKind("CommandAck")).toEqual({ command_id: null, node_id: 42n, accepted: false, message: "not_found: node 42 is not registered" });
    using node = await registerNode(core);
    ws.send({ node_id: BIG_ID, command: { Explode: "a" } });
    expect(await ws.nextKind("CommandAck")).toMatchObject({ accepted: false, message: expect.stringMatching(/^unknown_command/) });
    ws.send({ node_id: BIG_ID, command: { InstallPot: { pot_id: "x", honeypot_type: "cowrie", auto_start: "yes" } } });
    expect(await ws.nextKind("CommandAck")).toMatchObject({ accepted: false, message: expect.stringContaining("auto_start") });
    ws.send({ version: 3, message: { NodeCommand: { node_id: BIG_ID, command: { DeployPot: "a" } } } });
    expect(await ws.nextKind("Error")).toMatchObject({ code: "unsupported_version" });
    expect(node).toBeDefined();
  });

  test("non-JSON and binary frames get an error and the socket stays open", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    using ws = await WsClient.connect(core.ws);
    ws.send("not json");
    expect(await ws.nextKind("Error")).toMatchObject({ code: "bad_json" });
    ws.send(new Uint8Array([0xde, 0xad, 0xbe, 0xef]));
    expect(await ws.nextKind("Error")).toMatchObject({ code: "binary_not_supported" });
    ws.send({ node_id: BIG_ID, command: { GetPotStatus: "a" } });
    expect(await ws.nextKind("CommandAck")).toMatchObject({ accepted: true });
    expect(node).toBeDefined();
  });

  test("a frame over the size limit closes the socket with a reason", async () => {
    await using core = await startTestCore({ max_message_bytes: 64 * 1024 });
    const ws = await WsClient.connect(core.ws);
    using other = await WsClient.connect(core.ws);
    ws.send("x".repeat(64 * 1024 + 1));
    const closed = await ws.closed;
    expect(closed.code).toBe(1009);
    other.send("still here?");
    expect(await other.nextKind("Error")).toMatchObject({ code: "bad_json" });
  });
});
