import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MessageBus } from "../../src/core/bus";
import { createLogger, silentLogger, type Logger } from "../../src/log";
import { startNode, type NodeHandle } from "../../src/node/agent";
import type { NodeConfig } from "../../src/node/config";
import { freePort, getJson, startTestCore, tempDir, WsClient, type TestCore } from "../helpers";
import { FAST, FIXTURE_CATALOGUE, potOrder, potTell } from "./node-helpers";

type Door = "rest" | "ws";
interface Answer {
  result: any;
  record: any;
}

/** Real Core, real node agent with the fixture catalogue, a feed socket, all for one file. */
function world(overrides: Partial<NodeConfig> = {}, logger: () => Logger = silentLogger) {
  const w = {} as { core: TestCore; node: NodeHandle; feed: WsClient; dir: { path: string; [Symbol.dispose](): void } };
  beforeAll(async () => {
    w.core = await startTestCore();
    w.dir = tempDir();
    const registered = published(w.core.bus, "NodeRegistration");
    w.node = await startNode({ core: `127.0.0.1:${w.core.ports.node}`, events: `127.0.0.1:${w.core.ports.event}`, data: w.dir.path, name: "cmd-e2e", relay_port: 0, catalogue: FIXTURE_CATALOGUE, ...FAST, ...overrides }, logger());
    await registered;
    w.feed = await WsClient.connect(`${w.core.ws}/?kinds=CommandResult`);
  });
  afterAll(async () => {
    w.feed?.close();
    await w.node?.stop();
    await w.core?.[Symbol.asyncDispose]();
    w.dir?.[Symbol.dispose]();
  });
  return w;
}

function published(bus: MessageBus, kind: string, match: (payload: any) => boolean = () => true): Promise<any> {
  const { promise, resolve } = Promise.withResolvers<any>();
  const off = bus.subscribe((m) => {
    if (m.kind === kind && match(m.payload)) {
      off();
      resolve(m.payload);
    }
  });
  return promise;
}

/** Sends a command through one door and returns the node's CommandResult (from the live feed) and the stored record. */
async function send(w: ReturnType<typeof world>, door: Door, command: unknown): Promise<Answer> {
  let commandId: string;
  if (door === "rest") {
    const res = await getJson(`${w.core.api}/api/v1/nodes/${w.node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(command) });
    expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { command_id: expect.any(String) } });
    commandId = res.body.command_id;
  } else {
    w.feed.send({ version: 2, message: { NodeCommand: { node_id: w.node.nodeId, command } } });
    const ack = await w.feed.nextKind("CommandAck");
    expect(ack).toMatchObject({ accepted: true, node_id: w.node.nodeId });
    commandId = ack.command_id;
  }
  const result = await w.feed.nextKind("CommandResult", (r) => r.command_id === commandId);
  const record = (await getJson(`${w.core.api}/api/v1/commands/${commandId}`)).body;
  return { result, record };
}

/** The answer must be ok, stored as it came, and carry `data`. */
function answered(a: Answer, name: string): any {
  expect(a.result).toMatchObject({ ok: true, node_id: expect.any(BigInt) });
  expect(a.record).toMatchObject({ command: name, status: "succeeded", message: a.result.message, data: a.result.data });
  expect(a.result.data).toBeDefined();
  return a.result.data;
}

const honeypots = async (w: ReturnType<typeof world>) => (await getJson(`${w.core.api}/api/v1/nodes/${w.node.nodeId}`)).body.honeypots.map((p: any) => `${p.pot_id}:${p.status}`);

describe("every command through both doors, against a real node with a real pot", () => {
  const w = world();

  test.each(["rest", "ws"] as Door[])("through %s: each of the twelve commands answers with its data", async (door) => {
    const pot = `web-${door}`;
    const port = freePort();
    const install = await send(w, door, { InstallPot: { pot_id: pot, honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: true } });
    expect(answered(install, "InstallPot")).toEqual({ pot_id: pot, pot_type: "testpot", status: "Running", message: expect.stringContaining(`listen_port ${port}`) });

    expect(answered(await send(w, door, { GetPotStatus: pot }), "GetPotStatus")).toEqual({ pot_id: pot, pot_type: "testpot", status: "Running", message: expect.stringMatching(/^running \(pid \d+\)/) });
    const info = answered(await send(w, door, { GetPotInfo: pot }), "GetPotInfo");
    expect(info).toEqual({ pot_id: pot, pot_type: "testpot", status: "Running", message: expect.any(String), desired: "running", pid: expect.any(Number), source: FIXTURE_CATALOGUE, installed_at: expect.any(String) });
    expect(answered(await send(w, door, { GetInstalledPots: null }), "GetInstalledPots").pots).toContainEqual(info);

    expect(await potOrder(port, "emit 3")).toEqual({ emitted: 3 });
    const metrics = answered(await send(w, door, { GetPotMetrics: pot }), "GetPotMetrics");
    expect(metrics).toEqual({
      pot_id: pot,
      status: "Running",
      pid: info.pid,
      uptime_s: expect.any(Number),
      cpu_seconds: expect.any(Number),
      cpu_percent: expect.any(Number),
      rss_bytes: expect.any(Number),
      processes: expect.any(Number),
      restarts: 0,
      events_relayed: 3,
    });
    expect(metrics.rss_bytes).toBeGreaterThan(1024 * 1024);
    expect(metrics.processes).toBeGreaterThanOrEqual(1);

    const logs = answered(await send(w, door, { GetPotLogs: pot }), "GetPotLogs");
    expect(logs).toEqual({ pot_id: pot, stdout: [expect.stringContaining('"ready":true')], stderr: [], install: expect.arrayContaining(["resolving dependencies", "# installed"]) });

    expect(answered(await send(w, door, { StopPot: pot }), "StopPot")).toMatchObject({ pot_id: pot, status: "Stopped" });
    expect(answered(await send(w, door, { DeployPot: pot }), "DeployPot")).toMatchObject({ pot_id: pot, status: "Running" });
    expect(answered(await send(w, door, { RestartPot: pot }), "RestartPot")).toMatchObject({ pot_id: pot, status: "Running" });
    const restart = answered(await send(w, door, { Restart: null }), "Restart");
    expect(restart.restarted).toContain(pot);
    expect(restart.failed).toEqual([]);

    const settings = answered(await send(w, door, { UpdateConfig: null }), "UpdateConfig");
    expect(settings).toEqual({ log_level: "silent", heartbeat_ms: expect.any(Number), spool_max_bytes: w.node.config.spool_max_bytes });
    const slower = settings.heartbeat_ms + 10;
    expect(answered(await send(w, door, { UpdateConfig: { heartbeat_ms: slower } }), "UpdateConfig")).toEqual({ ...settings, heartbeat_ms: slower });

    expect(await honeypots(w)).toContain(`${pot}:Running`);
    expect(answered(await send(w, door, { RemovePot: pot }), "RemovePot")).toEqual({ pot_id: pot, removed: true });
    expect(await honeypots(w)).not.toContainEqual(expect.stringContaining(`${pot}:`));
    expect((await getJson(`${w.core.api}/api/v1/honeypots`)).body.honeypots.map((p: any) => p.pot_id)).not.toContain(pot);
    expect(existsSync(join(w.node.dataDir, "pots", pot))).toBe(false);
    expect(existsSync(join(w.node.dataDir, "logs", pot))).toBe(false);
    expect(JSON.parse(readFileSync(join(w.node.dataDir, "pots.json"), "utf8")).pots.map((p: any) => p.pot_id)).not.toContain(pot);
  });

  test("GetPotMetrics counts the automatic restarts of a pot that crashed", async () => {
    const port = freePort();
    answered(await send(w, "rest", { InstallPot: { pot_id: "crashy", honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: true } }), "InstallPot");
    const failed = published(w.core.bus, "PotStatusUpdate", (p) => p.pot_id === "crashy" && p.status === "Failed");
    const back = published(w.core.bus, "PotStatusUpdate", (p) => p.pot_id === "crashy" && p.status === "Running");
    await potTell(port, "crash");
    await failed;
    await back;
    expect(answered(await send(w, "ws", { GetPotMetrics: "crashy" }), "GetPotMetrics")).toMatchObject({ status: "Running", restarts: 1, events_relayed: 0 });
    const logs = answered(await send(w, "ws", { GetPotLogs: "crashy" }), "GetPotLogs");
    expect(logs.stderr).toEqual(["testpot: segmentation fault (crash requested)"]);
    expect(logs.stdout).toHaveLength(2);
  });

  test.each(["rest", "ws"] as Door[])("through %s: RemovePot clears a failed install from Core and the node", async (door) => {
    const pot = `broken-${door}`;
    const failed = published(w.core.bus, "PotStatusUpdate", (p) => p.pot_id === pot && p.status === "Failed");
    const install = await send(w, door, { InstallPot: { pot_id: pot, honeypot_type: "testpot", config: { listen_port: String(freePort()), install_mode: "fail" }, auto_start: true } });
    expect(install.result.ok).toBe(false);
    await failed;
    expect(await honeypots(w)).toContain(`${pot}:Failed`);
    // What is left of it on the node is its install log, which GetPotLogs still shows.
    expect(answered(await send(w, door, { GetPotLogs: pot }), "GetPotLogs").install).toContain("install aborted");

    expect(answered(await send(w, door, { RemovePot: pot }), "RemovePot")).toEqual({ pot_id: pot, removed: true });
    expect(await honeypots(w)).not.toContainEqual(expect.stringContaining(`${pot}:`));
    expect(existsSync(join(w.node.dataDir, "logs", pot))).toBe(false);
  });

  test("GetPotLogs answers while the pot's install is still running, with its log so far", async () => {
    let installed = false;
    const install = send(w, "rest", { InstallPot: { pot_id: "slow", honeypot_type: "testpot", config: { listen_port: String(freePort()), install_mode: "hang" }, auto_start: false } });
    void install.then(() => (installed = true));
    // Each round trip is a real answer; the node answers "not installed" until the install has begun.
    let logs: any = null;
    while (!logs?.install.includes("resolving dependencies")) {
      const a = await send(w, "ws", { GetPotLogs: "slow" });
      logs = a.result.ok ? a.result.data : null;
    }
    expect(installed).toBe(false);
    expect(await honeypots(w)).toContain("slow:Installing");
  });

  test("RemovePot of a pot the node never had is ok and removes nothing", async () => {
    expect(answered(await send(w, "ws", { RemovePot: "never-was" }), "RemovePot")).toEqual({ pot_id: "never-was", removed: false });
  });

  test("a pot command for a pot that is not installed fails with the installed list", async () => {
    const a = await send(w, "rest", { GetPotMetrics: "nope" });
    expect(a.result).toMatchObject({ ok: false, message: expect.stringMatching(/^no pot nope is installed on this node/) });
    expect(a.record).toMatchObject({ status: "failed", data: null });
  });
});

describe("UpdateConfig changes the node's live settings", () => {
  let logger: Logger;
  // Heartbeats an hour apart: only the change makes them come.
  const w = world({ heartbeat_ms: 3_600_000, log_level: "warn" }, () => (logger = createLogger("warn", { destination: { write() {} } })));

  test("heartbeat, log level and spool bound take effect at once", async () => {
    const beats: bigint[] = [];
    const three = Promise.withResolvers<void>();
    const off = w.core.bus.subscribe((m) => {
      if (m.kind === "NodeStatusUpdate" && (m.payload as any).node_id === w.node.nodeId && beats.push(w.node.nodeId) === 3) three.resolve();
    });
    const a = await send(w, "rest", { UpdateConfig: { heartbeat_ms: 20, log_level: "debug", spool_max_bytes: 64 * 1024 * 1024 } });
    expect(answered(a, "UpdateConfig")).toEqual({ heartbeat_ms: 20, log_level: "debug", spool_max_bytes: 64 * 1024 * 1024 });
    expect(a.result.message).toBe("changed heartbeat_ms, log_level, spool_max_bytes");
    await three.promise;
    off();
    expect(logger.level).toBe("debug");
    expect(w.node.spool.maxBytes).toBe(64 * 1024 * 1024);
  });

  test("a spool bound below one segment is refused and nothing changes", async () => {
    const a = await send(w, "ws", { UpdateConfig: { spool_max_bytes: 1024, log_level: "error" } });
    expect(a.result).toMatchObject({ ok: false, message: `spool_max_bytes 1024 is below spool_segment_bytes ${w.node.config.spool_segment_bytes}; nothing changed` });
    expect(a.record).toMatchObject({ status: "failed", data: { log_level: "debug", spool_max_bytes: 64 * 1024 * 1024 } });
    expect(logger.level).toBe("debug");
  });
});
