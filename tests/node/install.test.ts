import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers";
import { nodeTest, potOrder } from "./node-helpers";

describe("InstallPot from a directory catalogue", () => {
  test("auto_start on: Installing, Stopped, Running, with the runtime contract's config and env", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    const port = freePort();

    const result = await core.command(node.nodeId, { InstallPot: { pot_id: "pot-1", honeypot_type: "test-pot", config: { listen_port: String(port) }, auto_start: true } });
    expect(result.ok).toBe(true);
    expect((await core.status("pot-1")).status).toBe("Installing");
    expect(await core.status("pot-1")).toMatchObject({ status: "Stopped", pot_type: "testpot" });
    const running = await core.status("pot-1");
    expect(running).toMatchObject({ node_id: node.nodeId, pot_type: "testpot", status: "Running" });
    expect(running.message).toContain(`listen_port ${port}`);

    const potDir = join(node.dataDir, "pots", "pot-1");
    expect(JSON.parse(readFileSync(join(potDir, "installed.json"), "utf8"))).toEqual({ cwd: potDir, pot_id: "pot-1" });
    const seen = await potOrder(port, "env");
    const expectedConfig = {
      listen_port: String(port),
      mode: "normal",
      install_mode: "ok",
      banner: "testpot",
      event_host: "127.0.0.1",
      event_port: String(node.ports.relay),
      node_id: node.nodeId.toString(),
      pot_id: "pot-1",
      pot_type: "testpot",
    };
    expect(seen.config).toEqual(expectedConfig);
    expect(seen.cwd).toBe(potDir);
    expect(seen.env).toEqual({
      ...Object.fromEntries(Object.entries(expectedConfig).map(([k, v]) => [`HONEYBEE_${k.toUpperCase()}`, v])),
      HONEYBEE_CONFIG: join(potDir, "config.json"),
      // stdin is the node's pipe: its end means the node is gone (catalogue/README.md).
      HONEYBEE_EXIT_ON_STDIN_EOF: "1",
    });
    expect(seen.keys.filter((k: string) => !k.startsWith("HONEYBEE_"))).toEqual(["HOME", "LANG", "PATH"].filter((k) => process.env[k]));
    expect(existsSync(join(node.dataDir, "logs", "pot-1", "install.log"))).toBe(true);
  });

  test("hostile config values reach the honeypot verbatim and run nothing", async () => {
    await using t = await nodeTest();
    const port = freePort();
    const marker = join(t.data, "pwned");
    const banner = `$(touch ${marker})`.slice(0, 32);
    const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: "hostile", honeypot_type: "testpot", config: { listen_port: String(port), banner }, auto_start: true } });
    expect(r.ok).toBe(true);
    await t.core.status("hostile", "Running");
    const seen = await potOrder(port, "env");
    expect(seen.config.banner).toBe(banner);
    expect(seen.env.HONEYBEE_BANNER).toBe(banner);
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(t.node.dataDir, "pots", "hostile", "config.json"), "utf8")).toContain(JSON.stringify(banner));
  });

  test("auto_start off: ends Stopped; DeployPot starts it, StopPot stops it, GetPotStatus tells", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    const port = freePort();

    expect(await core.command(node.nodeId, { InstallPot: { pot_id: "quiet", honeypot_type: "testpot", config: { listen_port: String(port) }, auto_start: false } })).toMatchObject({ ok: true });
    await core.status("quiet", "Stopped");
    expect(await core.command(node.nodeId, { GetPotStatus: "quiet" })).toMatchObject({ ok: true, message: expect.stringMatching(/^Stopped/) });

    expect(await core.command(node.nodeId, { DeployPot: "quiet" })).toMatchObject({ ok: true });
    await core.status("quiet", "Running");
    expect(await core.command(node.nodeId, { GetPotStatus: "quiet" })).toMatchObject({ ok: true, message: expect.stringMatching(/^Running/) });

    expect(await core.command(node.nodeId, { StopPot: "quiet" })).toMatchObject({ ok: true });
    expect((await core.status("quiet", "Stopped", "Running", "Failed")).status).toBe("Stopped");
    expect(await core.command(node.nodeId, { GetInstalledPots: null })).toMatchObject({ ok: true, message: "1 pot(s): quiet (testpot, Stopped)" });
  });
});
