import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "../../src/log";
import { startNode } from "../../src/node/agent";
import { BIG_ID, EventStreamClient, ROOT, getJson, registerNode, settled, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { FAST, FIXTURE_CATALOGUE } from "../node/node-helpers";

const SAMPLES = join(ROOT, "tests", "ingest", "samples");
const sample = (file: string) => readFileSync(join(SAMPLES, file), "utf8").trim().split("\n");
const COWRIE = sample("cowrie-2.9-honeybee-output.jsonl");
const HONNYPOTTER = sample("honnypotter-forwarder-output.jsonl");

const cowrieLine = (potId: string, fields: Record<string, unknown> = {}) => JSON.stringify({ ...JSON.parse(COWRIE[0]!), honeybee_honeypot_id: potId, ...fields });

type Pot = { node_id: bigint; pot_id: string; pot_type: string; status: string };
const pots = async (core: TestCore) => ((await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots as Pot[]).sort((a, b) => a.pot_id.localeCompare(b.pot_id));
const potOf = async (core: TestCore, potId: string) => (await pots(core)).find((p) => p.pot_id === potId);

const post = (core: TestCore, nodeId: bigint, body: unknown) =>
  getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Sends lines to the event socket and waits until Core has committed them. */
async function sendCommitted(core: TestCore, lines: string[], hello: { node_id?: bigint } = {}) {
  const c = await EventStreamClient.connect(core.ports.event, { ...hello, acks: true });
  c.send(lines);
  await c.ack(lines.length);
  c.socket.end();
  await settled(core);
}

describe("pots that Core did not install are registered as External", () => {
  test("sent straight to the event socket: node_id 0, the kind from the events; the events keep no node", async () => {
    await using core = await startTestCore();
    const direct = await EventStreamClient.connect(core.ports.event);
    direct.send([...COWRIE, ...HONNYPOTTER]);
    await until(async () => (await pots(core)).length === 2, "both pots in the registry");
    expect(await pots(core)).toEqual([
      { node_id: 0n, pot_id: "cowrie-lab", pot_type: "cowrie", status: "External" },
      { node_id: 0n, pot_id: "honnypotter-01", pot_type: "honnypotter", status: "External" },
    ]);
    direct.socket.end();
    await settled(core);
    const events = (await getJson(`${core.api}/api/v1/events?pot_id=cowrie-lab&limit=1`)).body.events;
    expect(events[0]).toMatchObject({ node_id: null, pot_id: "cowrie-lab", pot_type: "cowrie" });
  });

  test("sent to a real node's relay: External on the node's page and in the list", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    const node = await startNode(
      { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(dir.path, "node"), name: "sensor-1", relay_port: 0, catalogue: FIXTURE_CATALOGUE, log_level: "silent", ...FAST },
      silentLogger(),
    );
    try {
      await node.registered();
      const cowrie = await EventStreamClient.connect(node.ports.relay);
      cowrie.send(cowrieLine("edge-ssh"));
      const found = await until(async () => (await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`)).body.honeypots.find((p: { pot_id: string }) => p.pot_id === "edge-ssh"), "the pot on the node's page");
      expect(found).toEqual({ pot_id: "edge-ssh", pot_type: "cowrie", status: "External" });
      expect(await pots(core)).toEqual([{ node_id: node.nodeId, pot_id: "edge-ssh", pot_type: "cowrie", status: "External" }]);
      cowrie.socket.end();
    } finally {
      await node.stop();
    }
  });

  test("a pot the registry knows keeps its status and kind", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running" });
    await until(async () => (await potOf(core, "ssh-01"))?.status === "Running", "ssh-01 Running");
    await sendCommitted(core, [cowrieLine("ssh-01", { honeybee_honeypot_type: "other" }), cowrieLine("new-01")], { node_id: BIG_ID });
    expect(await pots(core)).toEqual([
      { node_id: BIG_ID, pot_id: "new-01", pot_type: "cowrie", status: "External" },
      { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running" },
    ]);
    // The node's own report wins over External.
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "new-01", pot_type: "cowrie", status: "Stopped" });
    await until(async () => (await potOf(core, "new-01"))?.status === "Stopped", "new-01 Stopped");
  });

  test("an External pot is stored: it is still there after a restart", async () => {
    using dir = tempDir();
    const db = join(dir.path, "honeybee.db");
    {
      await using core = await startTestCore({ db });
      await sendCommitted(core, [cowrieLine("lab-ssh")]);
    }
    await using core = await startTestCore({ db });
    expect(await pots(core)).toEqual([{ node_id: 0n, pot_id: "lab-ssh", pot_type: "cowrie", status: "External" }]);
  });

  test("events without a usable pot id register nothing", async () => {
    await using core = await startTestCore();
    const noPot = JSON.stringify({ eventid: "cowrie.session.connect", src_ip: "203.0.113.7" });
    await sendCommitted(core, [noPot, cowrieLine("../etc"), cowrieLine("sync-1")]);
    expect((await pots(core)).map((p) => p.pot_id)).toEqual(["sync-1"]);
  });
});

describe("commands for an External pot", () => {
  test("Core refuses to start, stop or query it, and RemovePot takes it out of the registry", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    await sendCommitted(core, [cowrieLine("edge-ssh")], { node_id: BIG_ID });
    await sendCommitted(core, [cowrieLine("lab-ssh")]);

    for (const command of [{ DeployPot: "edge-ssh" }, { StopPot: "edge-ssh" }, { RestartPot: "edge-ssh" }, { GetPotStatus: "edge-ssh" }, { GetPotLogs: "edge-ssh" }]) {
      const res = await post(core, BIG_ID, command);
      expect({ command, status: res.status, code: res.body.error.code }).toEqual({ command, status: 409, code: "pot_external" });
      expect(res.body.error.message).toContain(`honeybee remove ${BIG_ID} edge-ssh`);
    }
    const install = await post(core, BIG_ID, { InstallPot: { pot_id: "edge-ssh", honeypot_type: "cowrie", config: {}, auto_start: false } });
    expect(install.status).toBe(409);
    expect(install.body.error.code).toBe("pot_external");
    const noNode = await post(core, 0n, { DeployPot: "lab-ssh" });
    expect(noNode.status).toBe(409);
    expect(noNode.body.error.message).toContain("honeybee remove 0 lab-ssh");

    const removed = await post(core, BIG_ID, { RemovePot: "edge-ssh" });
    expect(removed.status).toBe(202);
    const record = (await getJson(`${core.api}/api/v1/commands/${removed.body.command_id}`)).body;
    expect(record).toMatchObject({ command: "RemovePot", pot_id: "edge-ssh", status: "succeeded", data: { pot_id: "edge-ssh", removed: false } });
    expect(record.message).toContain("External");
    expect((await post(core, 0n, { RemovePot: "lab-ssh" })).status).toBe(202);
    expect(await pots(core)).toEqual([]);

    // Nothing of this reached the node: the next command it gets is this one.
    const status = await post(core, BIG_ID, { GetInstalledPots: null });
    expect((await node.nextKind("NodeCommand")).command_id).toBe(status.body.command_id);
  });

  test("a removed pot comes back with its next event, not with events from before its removal", async () => {
    await using core = await startTestCore();
    await sendCommitted(core, [cowrieLine("lab-ssh")]);
    expect((await post(core, 0n, { RemovePot: "lab-ssh" })).status).toBe(202);
    await until(async () => (await pots(core)).length === 0, "lab-ssh removed");
    const before = new Date(Date.now() - 60_000).toISOString();
    await sendCommitted(core, [cowrieLine("lab-ssh", { timestamp: before }), cowrieLine("sync-1")]);
    expect((await pots(core)).map((p) => p.pot_id)).toEqual(["sync-1"]);
    await sendCommitted(core, [cowrieLine("lab-ssh", { timestamp: new Date(Date.now() + 1000).toISOString() })]);
    expect((await pots(core)).map((p) => p.pot_id)).toEqual(["lab-ssh", "sync-1"]);
  });
});
