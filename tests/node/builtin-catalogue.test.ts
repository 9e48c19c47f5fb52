import { describe, expect, test } from "bun:test";
import { freePort, LineClient } from "../helpers";
import { nodeTest } from "./node-helpers";

describe("the built-in catalogue through the node", () => {
  test("cowrie installs by alias from the default catalogue, runs, and its events reach Core stamped", async () => {
    await using t = await nodeTest({ catalogue: "" });
    const telnet = freePort();
    const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: "ssh-01", honeypot_type: "ssh-telnet", config: { ssh_port: String(freePort()), telnet_port: String(telnet) }, auto_start: true } });
    expect(r).toMatchObject({ ok: true, message: expect.stringContaining("installed cowrie as ssh-01; running") });
    const attacker = await LineClient.connect(telnet);
    try {
      await t.core.waitEvents(1);
      expect(t.core.events[0]).toMatchObject({ eventid: "cowrie.session.connect", node_id: t.node.nodeId, pot_id: "ssh-01", pot_type: "cowrie", dst_port: telnet });
    } finally {
      attacker.close();
    }
  });
});
