import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../helpers";
import { potTell, sharedNodeTest } from "./node-helpers";

const t = sharedNodeTest({ start_timeout_ms: 300, stop_grace_ms: 300 });

async function installRunning(potId: string, config: Record<string, string> = {}) {
  const port = freePort();
  const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: potId, honeypot_type: "testpot", config: { listen_port: String(port), ...config }, auto_start: true } });
  await t.core.status(potId, "Installing");
  await t.core.status(potId, "Stopped");
  return { port, result: r };
}

describe("supervised honeypot processes", () => {
  test("a crash becomes Failed with the tail of stderr, then the pot is restarted", async () => {
    const { port } = await installRunning("crashy");
    await t.core.status("crashy", "Running");
    const pid = t.node.supervisor.status("crashy")!.pid;
    await potTell(port, "crash");
    const failed = await t.core.status("crashy", "Failed");
    expect(failed.message).toMatch(/^crashy exited unexpectedly \(exit code 4\): testpot: segmentation fault \(crash requested\); restarting in \d+ ms \(attempt 1\)$/);
    await t.core.status("crashy", "Running");
    expect(t.node.supervisor.status("crashy")!.pid).not.toBe(pid);
    expect(readFileSync(join(t.node.dataDir, "logs", "crashy", "stderr.log"), "utf8")).toContain("segmentation fault");
    expect(readFileSync(join(t.node.dataDir, "logs", "crashy", "stdout.log"), "utf8")).toContain('{"ready":true');
  });

  test("a pot that dies at start: DeployPot answers why, the supervisor keeps retrying, StopPot ends it", async () => {
    const { result } = await installRunning("doomed", { mode: "crash_on_start" });
    expect(result.ok).toBe(false);
    expect(result.message).toContain("crash_on_start requested");
    const first = await t.core.status("doomed", "Failed");
    expect(first.message).toMatch(/exit code 3\): testpot: cannot open \/dev\/honey: crash_on_start requested; restarting in \d+ ms \(attempt 1\)/);
    expect((await t.core.status("doomed", "Failed")).message).toContain("(attempt 2)");
    expect(await t.core.command(t.node.nodeId, { StopPot: "doomed" })).toMatchObject({ ok: true });
    await t.core.status("doomed", "Stopped");
    const info = (await t.core.command(t.node.nodeId, { GetPotInfo: "doomed" })).data;
    expect(info).toMatchObject({ pot_id: "doomed", status: "Stopped", desired: "stopped", pid: null });
  });

  test("a pot that ignores SIGTERM is killed after the grace period", async () => {
    await installRunning("stubborn", { mode: "ignore_sigterm" });
    await t.core.status("stubborn", "Running");
    const r = await t.core.command(t.node.nodeId, { StopPot: "stubborn" });
    expect(r).toMatchObject({ ok: true, message: "stubborn stopped (signal SIGKILL)" });
    await t.core.status("stubborn", "Stopped");
  });

  test("a pot without a ready line counts as Running once the start timeout passes and it is alive", async () => {
    await installRunning("mute", { mode: "no_ready" });
    const running = await t.core.status("mute", "Running");
    expect(running.message).toMatch(/no ready line within 300 ms, but the process is alive/);
  });

  test("RestartPot stops and starts with a new process; DeployPot of a running pot is a no-op", async () => {
    await installRunning("cycled");
    await t.core.status("cycled", "Running");
    const pid = t.node.supervisor.status("cycled")!.pid;
    expect(await t.core.command(t.node.nodeId, { DeployPot: "cycled" })).toMatchObject({ ok: true, message: `cycled is already running (pid ${pid})` });
    expect(await t.core.command(t.node.nodeId, { RestartPot: "cycled" })).toMatchObject({ ok: true });
    expect(await t.core.status("cycled", "Stopped")).toMatchObject({ message: "restarting" });
    await t.core.status("cycled", "Running");
    expect(t.node.supervisor.status("cycled")!.pid).not.toBe(pid);
  });
});
