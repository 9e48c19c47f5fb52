import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeCore } from "../helpers/fake-core";
import { freePort, tempDir } from "../helpers";
import { nodeTest, startTestNode } from "./node-helpers";

describe("restart safety", () => {
  test("a restarted node keeps its id, reports every installed pot and brings back the running ones", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    const first = await startTestNode(core, dir.path);
    try {
      await core.next("NodeRegistration");
      const install = (pot_id: string, auto_start: boolean) =>
        core.command(first.nodeId, { InstallPot: { pot_id, honeypot_type: "testpot", config: { listen_port: String(freePort()) }, auto_start } });
      expect((await install("runner", true)).ok).toBe(true);
      expect((await install("idler", false)).ok).toBe(true);
      expect((await install("halted", true)).ok).toBe(true);
      expect((await core.command(first.nodeId, { StopPot: "halted" })).ok).toBe(true);
    } finally {
      await first.stop();
    }
    // Stopping the node stops its pots first, then says goodbye.
    await core.next("NodeDrop");
    expect(core.messages.all.slice(-2).map((m) => [m.kind, m.payload?.pot_id, m.payload?.status, m.payload?.message])).toEqual([
      ["PotStatusUpdate", "runner", "Stopped", "stopped with the node"],
      ["NodeDrop", undefined, undefined, undefined],
    ]);
    core.messages.clear();

    await using second = await startTestNode(core, dir.path);
    expect(second.nodeId).toBe(first.nodeId);
    expect((await core.next("NodeRegistration")).node_id).toBe(first.nodeId);
    await second.restored;
    const reported = new Map<string, string>();
    for (const id of ["runner", "idler", "halted"]) reported.set(id, (await core.status(id)).status);
    expect(reported.get("idler")).toBe("Stopped");
    expect(reported.get("halted")).toBe("Stopped");
    expect(second.supervisor.status("runner")!.status).toBe("Running");
    expect(second.supervisor.status("idler")!.status).toBe("Stopped");
    expect(await core.command(second.nodeId, { GetPotStatus: "idler" })).toMatchObject({ ok: true, message: "Stopped" });
  });

  test("an install cut off by a crash is removed and reported Failed", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    mkdirSync(join(dir.path, "pots", "half"), { recursive: true });
    const pots = [{ pot_id: "half", pot_type: "testpot", config: {}, phase: "installing", desired: "stopped", source: "x", installed_at: new Date().toISOString() }];
    writeFileSync(join(dir.path, "pots.json"), JSON.stringify({ pots }));
    await using node = await startTestNode(core, dir.path);
    const failed = await core.status("half", "Failed");
    expect(failed.message).toBe("install was interrupted by a node restart; send InstallPot again");
    expect(existsSync(join(dir.path, "pots", "half"))).toBe(false);
    expect(await core.command(node.nodeId, { GetInstalledPots: null })).toMatchObject({ ok: true, message: "no pots installed" });
  });

  test("stopping the node kills a running install step; the pot ends Failed and is not left half-installed", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    await using node = await startTestNode(core, dir.path);
    await core.next("NodeRegistration");
    const result = core.command(node.nodeId, { InstallPot: { pot_id: "slow", honeypot_type: "testpot", config: { listen_port: String(freePort()), install_mode: "hang" }, auto_start: true } });
    await core.status("slow", "Installing");
    await node.stop();
    expect(await result).toMatchObject({ ok: false, message: expect.stringContaining("the node is shutting down") });
    expect((await core.status("slow", "Failed")).message).toContain("shutting down");
    expect(existsSync(join(dir.path, "pots", "slow"))).toBe(false);
  });

  test("a second agent on the same data directory is refused", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    await using _node = await startTestNode(core, dir.path);
    await expect(startTestNode(core, dir.path)).rejects.toThrow(/is already used by a node agent in this process/);
  });
});

describe("control link", () => {
  test("reconnects when Core comes back, registers again and re-reports its pots", async () => {
    await using t = await nodeTest();
    const { core, node } = t;
    await core.next("NodeStatusUpdate", (s) => s.status === "Running");
    expect((await core.command(node.nodeId, { InstallPot: { pot_id: "kept", honeypot_type: "testpot", config: { listen_port: String(freePort()) }, auto_start: true } })).ok).toBe(true);
    await core.status("kept", "Running");
    core.messages.clear();

    core.stopControl();
    await core.next("#closed");
    core.startControl();
    expect((await core.next("NodeRegistration")).node_id).toBe(node.nodeId);
    expect((await core.status("kept")).status).toBe("Running");
    // Heartbeats keep coming on the new connection.
    await core.next("NodeStatusUpdate");
    await core.next("NodeStatusUpdate");
    expect(core.registrations).toBe(2);
  });

  test("a refused registration is retried with backoff", async () => {
    await using t = await nodeTest({}, { refuse: "unsupported protocol version" });
    const { core } = t;
    await core.next("NodeRegistration");
    expect(core.messages.all.some((m) => m.kind === "NodeStatusUpdate")).toBe(false);
  });
});
