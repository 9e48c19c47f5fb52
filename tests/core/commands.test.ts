import { describe, expect, test } from "bun:test";
import { BIG_ID, WsClient, getJson, registerNode, startTestCore } from "../helpers";

const INSTALL = { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: "2222", telnet_port: "2223", hostname: "db-prod-2", log_path: "log" }, auto_start: true };
const COMMANDS = [{ InstallPot: INSTALL }, { DeployPot: "ssh-01" }, { StopPot: "ssh-01" }, { RestartPot: "ssh-01" }, { GetPotStatus: "ssh-01" }];

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
