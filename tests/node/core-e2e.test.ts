import { describe, expect, test } from "bun:test";
import type { MessageBus } from "../../src/core/bus";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { freePort, getJson, startTestCore, tempDir } from "../helpers";
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
