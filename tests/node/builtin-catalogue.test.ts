import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
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

  test.each([["cowrie", "../../.."], ["honnypotter", "log/../../elsewhere"], ["cowrie", "/tmp"]])(
    "%s: a log_path outside the pot's folder (%p) is refused with a clear install failure",
    async (kind, logPath) => {
      await using t = await nodeTest({ catalogue: "" });
      const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: "p1", honeypot_type: kind, config: { log_path: logPath }, auto_start: true } });
      const message = `config key log_path: ${JSON.stringify(logPath)} leaves the pot's folder; give a relative path inside it, without ".." (e.g. "log")`;
      expect(r).toMatchObject({ ok: false, message });
      expect(await t.core.status("p1", "Failed")).toMatchObject({ message });
      expect(existsSync(join(t.node.dataDir, "pots", "p1"))).toBe(false);
    },
  );
});
