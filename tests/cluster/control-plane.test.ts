/**
 * Several Core instances in one process, each with its own bus connection, on the machine's
 * PostgreSQL and NATS: the registry, the live feed of registry changes and commands work
 * across instances (docs/scale-out.md). Events across instances: tests/cluster/instances.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BIG_ID, getJson, registerNode, startTestCore, until, WsClient, type TestCore } from "../helpers";
import { clusterName, dropCluster, sharedDatabase } from "./helpers";

describe("instances share the registry, the feed and the commands", () => {
  const cluster = clusterName();
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  let a: TestCore, b: TestCore, c: TestCore;

  beforeAll(async () => {
    db = await sharedDatabase();
    const start = (roles: string) => startTestCore({ db: db.url, bus: "nats://127.0.0.1:4222", cluster, roles });
    [a, b, c] = await Promise.all([start("ingest,api,proxy"), start("ingest,api,proxy"), start("ingest,api,proxy")]);
  });
  afterAll(async () => {
    await Promise.all([a, b, c].map((x) => x?.stop()));
    await dropCluster(cluster);
    await db?.drop();
  });

  test("a node on B is Connected in the REST of A, B and C, and its pot too", async () => {
    const node = await registerNode(b, BIG_ID, "sensor-b");
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "cowrie-1", pot_type: "cowrie", status: "Running" });
    for (const x of [a, b, c]) {
      const got = await until(async () => {
        const r = await getJson(`${x.api}/api/v1/nodes/${BIG_ID}`);
        return r.status === 200 && r.body.status === "Connected" && r.body.honeypots?.some?.((p: any) => p.pot_id === "cowrie-1") ? r.body : null;
      }, `node on ${x === a ? "A" : x === b ? "B" : "C"}`);
      expect(got.node_name).toBe("sensor-b");
    }
    node.close();
  });

  test("a command issued on A reaches the node on B; its result reaches a feed client on C and the record on A", async () => {
    const nodeId = BIG_ID - 1n;
    const node = await registerNode(b, nodeId, "sensor-b2");
    await until(() => a.cluster!.bridge.presence.holderOf(nodeId) !== null, "A to learn who holds the node");
    const feed = await WsClient.connect(`${c.ws}/?kinds=CommandResult`);
    const issued = await getJson(`${a.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetPotStatus: "cowrie-1" }) });
    expect(issued.status).toBe(202);
    const cmd = await node.nextKind("NodeCommand");
    expect(cmd.command_id).toBe(issued.body.command_id);
    node.send("CommandResult", { command_id: cmd.command_id, node_id: nodeId, ok: true, message: "all well" });
    const result = await feed.next((m) => m?.message?.CommandResult?.command_id === cmd.command_id);
    expect(result.message.CommandResult.message).toBe("all well");
    const record = await until(async () => {
      const r = await getJson(`${a.api}/api/v1/commands/${cmd.command_id}`);
      return r.body?.status === "succeeded" ? r.body : null;
    }, "the record on A to close");
    expect(record.message).toBe("all well");
    feed.close();
    node.close();
  });

  test("a command for a node nobody holds is refused with 409 on every instance", async () => {
    for (const x of [a, c]) {
      const r = await getJson(`${x.api}/api/v1/nodes/${BIG_ID}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetPotStatus: "cowrie-1" }) });
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 409, code: "node_not_connected" });
    }
  });

  test("a node that moves from B to C is held by C: commands from A follow it", async () => {
    const nodeId = BIG_ID - 2n;
    const first = await registerNode(b, nodeId, "mover");
    await until(() => a.cluster!.bridge.presence.holderOf(nodeId) === b.cluster!.bus.instance, "A to see B hold it");
    const second = await registerNode(c, nodeId, "mover");
    await until(() => a.cluster!.bridge.presence.holderOf(nodeId) === c.cluster!.bus.instance, "A to see C hold it");
    // B let go of its stale connection when C announced the registration.
    await first.closed;
    const issued = await getJson(`${a.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetPotStatus: "cowrie-1" }) });
    expect(issued.status).toBe(202);
    const cmd = await second.nextKind("NodeCommand");
    expect(cmd.command_id).toBe(issued.body.command_id);
    second.close();
  });
});
