import { describe, expect, test } from "bun:test";
import { BIG_ID, EventStreamClient, registerNode, settled, startTestCore, type TestCore } from "../helpers";
import { cli } from "./cli-helpers";

const line = (potId: string) => JSON.stringify({ eventid: "cowrie.login.failed", src_ip: "203.0.113.7", username: "root", password: "x", honeybee_honeypot_id: potId, timestamp: new Date().toISOString() });

async function send(core: TestCore, potId: string, nodeId?: bigint) {
  const c = await EventStreamClient.connect(core.ports.event, { ...(nodeId ? { node_id: nodeId } : {}), acks: true });
  c.send(line(potId));
  await c.ack(1);
  c.socket.end();
  await settled(core);
}

describe("External pots in the CLI", () => {
  test("pots lists them; start is refused with the reason; remove takes them out of the registry", async () => {
    await using core = await startTestCore();
    using _node = await registerNode(core);
    await send(core, "edge-ssh", BIG_ID);
    await send(core, "lab-ssh");

    const table = (await cli(["pots"], core)).stdout.trimEnd().split("\n");
    expect(table.slice(1)).toEqual([expect.stringMatching(/^lab-ssh\s+cowrie\s+External\s+\(no node\)\s+0$/), expect.stringMatching(new RegExp(`^edge-ssh\\s+cowrie\\s+External\\s+sensor-1\\s+${BIG_ID}$`))]);

    const start = await cli(["start", "sensor-1", "edge-ssh"], core);
    expect(start).toMatchObject({ code: 1, stdout: "" });
    expect(start.stderr).toContain(`is External`);
    expect(start.stderr).toContain(`honeybee remove ${BIG_ID} edge-ssh`);
    expect(start.stderr).not.toContain("node agent running");

    const removeEdge = await cli(["remove", "sensor-1", "edge-ssh"], core);
    expect(removeEdge).toMatchObject({ code: 0, stdout: `edge-ssh was not on node sensor-1 (${BIG_ID}); removed it from Core's registry\n` });
    const removeLab = await cli(["remove", "0", "lab-ssh", "--json"], core);
    expect(removeLab).toMatchObject({ code: 0, json: { node_id: 0n, pot_id: "lab-ssh", ok: true, removed: false } });
    expect((await cli(["pots", "--json"], core)).json).toEqual({ honeypots: [] });
  });
});
