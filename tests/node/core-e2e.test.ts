import { describe, expect, test } from "bun:test";
import type { MessageBus } from "../../src/core/bus";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { statfsSync } from "node:fs";
import { cpus, totalmem, uptime } from "node:os";
import pkg from "../../package.json" with { type: "json" };
import { freePort, getJson, registerNode, startTestCore, tempDir, until } from "../helpers";
import { FAST, FIXTURE_CATALOGUE } from "./node-helpers";

/** The next message of a kind that Core publishes, e.g. after a node reported something. */
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

describe("node agent with the real Core", () => {
  test("registers, runs a REST command end to end, and says NodeDrop when stopped", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    const registered = published(core.bus, "NodeRegistration");
    // Until Core's event socket lands its port is 0; the forwarder then just keeps retrying.
    const events = `127.0.0.1:${core.ports.event || freePort()}`;
    const node = await startNode({ core: `127.0.0.1:${core.ports.node}`, events, data: dir.path, name: "e2e", relay_port: 0, catalogue: FIXTURE_CATALOGUE, ...FAST }, silentLogger());
    try {
      expect((await registered).node_id).toBe(node.nodeId);
      const listed = await getJson(`${core.api}/api/v1/nodes`);
      expect(listed.body.nodes).toContainEqual(expect.objectContaining({ node_id: node.nodeId, node_name: "e2e", node_type: "Full" }));

      const running = published(core.bus, "PotStatusUpdate", (p) => p.pot_id === "web-1" && p.status === "Running");
      const port = freePort();
      const post = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ InstallPot: { pot_id: "web-1", honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: true } }),
      });
      expect(post.status).toBe(202);
      const result = await published(core.bus, "CommandResult", (r) => r.command_id === post.body.command_id);
      expect(result).toMatchObject({ ok: true, node_id: node.nodeId });
      await running;
      const record = await getJson(`${core.api}/api/v1/commands/${post.body.command_id}`);
      expect(record.body).toMatchObject({ status: "succeeded", command: "InstallPot", pot_id: "web-1" });
      const detail = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`);
      expect(detail.body.honeypots).toEqual([{ pot_id: "web-1", pot_type: "testpot", status: "Running" }]);

      // Its heartbeats carry the node's figures (NodeStatusUpdate `health`), read from os and /proc.
      const healthy = await until(async () => {
        const b = (await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`)).body;
        return b.health?.cpu_percent !== undefined && b;
      }, "a heartbeat with the CPU figure (the second one)");
      const h = healthy.health;
      expect(h.agent_version).toBe(pkg.version);
      expect(h.uptime_s).toBeGreaterThanOrEqual(0);
      expect(h.uptime_s).toBeLessThan(process.uptime() + 1);
      expect(h.host_uptime_s).toBeCloseTo(uptime(), -1);
      expect(h.cpus).toBe(cpus().length);
      expect(h.cpu_percent).toBeGreaterThanOrEqual(0);
      expect(h.cpu_percent).toBeLessThanOrEqual(100);
      expect(h.mem_total_bytes).toBe(totalmem());
      expect(h.mem_available_bytes).toBeGreaterThan(0);
      expect(h.mem_available_bytes).toBeLessThanOrEqual(h.mem_total_bytes);
      expect(h.agent_rss_bytes).toBeGreaterThan(1024 * 1024);
      const fs = statfsSync(dir.path);
      expect(h.disk_total_bytes).toBe(fs.blocks * fs.bsize);
      expect(h.disk_free_bytes).toBeGreaterThan(0);
      expect(h.disk_free_bytes).toBeLessThanOrEqual(h.disk_total_bytes);
      expect(Date.now() - Date.parse(healthy.last_heartbeat)).toBeLessThan(5000);
      expect(Date.parse(h.reported_at)).toBe(Date.parse(healthy.last_heartbeat));

      // A node that sends plain heartbeats (an older agent, the upstream node) is listed as before, with no figures.
      using old = await registerNode(core, 4242n, "old-node");
      expect((await getJson(`${core.api}/api/v1/nodes/4242`)).body).toMatchObject({ status: "Connected", last_heartbeat: null, health: null });
      old.send("NodeStatusUpdate", { node_id: 4242n, status: "Running" });
      const plain = await until(async () => {
        const b = (await getJson(`${core.api}/api/v1/nodes/4242`)).body;
        return b.status === "Running" && b;
      }, "the old node's heartbeat");
      expect(plain.health).toBeNull();
      expect(Date.now() - Date.parse(plain.last_heartbeat)).toBeLessThan(5000);

      const dropped = published(core.bus, "NodeDrop");
      await node.stop();
      await dropped;
      const after = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`);
      expect(after.body).toMatchObject({ status: "Stopped", honeypots: [{ pot_id: "web-1", pot_type: "testpot", status: "Stopped" }] });
    } finally {
      await node.stop();
    }
  });
});
