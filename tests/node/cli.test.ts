import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { processRunning as processAlive } from "../../src/node/orphans";
import { FakeCore } from "../helpers/fake-core";
import { BUN, freePort, ROOT, tempDir, until } from "../helpers";
import { FIXTURE_CATALOGUE } from "./node-helpers";

function spawnNode(core: FakeCore, data: string, catalogue = FIXTURE_CATALOGUE) {
  const args = ["--core", core.core, "--events", core.eventsAddress, "--name", "cli-node", "--type", "Agent", "--data", data, "--relay-port", "0", ...(catalogue ? ["--catalogue", catalogue] : [])];
  const fast = ["--heartbeat-ms", "50", "--reconnect-min-ms", "10", "--reconnect-max-ms", "100", "--stop-grace-ms", "2000", "--log-level", "silent"];
  return Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "node", ...args, ...fast], { stdout: "pipe", stderr: "pipe" });
}

const pidOf = (status: { message: string }) => Number(/\(pid (\d+)\)/.exec(status.message)![1]);

describe("honeybee node", () => {
  test("survives SIGKILL (the orphaned pot is found and replaced) and stops cleanly on SIGTERM", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    const procs: ReturnType<typeof spawnNode>[] = [];
    const pots: number[] = [];
    try {
      procs.push(spawnNode(core, dir.path));
      const reg = await core.next("NodeRegistration");
      expect(reg).toMatchObject({ node_name: "cli-node", node_type: "Agent", address: "127.0.0.1" });
      expect(typeof reg.node_id).toBe("bigint");
      const r = await core.command(reg.node_id, { InstallPot: { pot_id: "p1", honeypot_type: "testpot", config: { listen_port: String(freePort()) }, auto_start: true } });
      expect(r.ok).toBe(true);
      const orphan = pidOf(await core.status("p1", "Running"));
      pots.push(orphan);

      procs[0]!.kill("SIGKILL");
      await procs[0]!.exited;
      expect(processAlive(orphan)).toBe(true);
      core.messages.clear();

      procs.push(spawnNode(core, dir.path));
      expect((await core.next("NodeRegistration")).node_id).toBe(reg.node_id);
      const replacement = pidOf(await core.status("p1", "Running"));
      pots.push(replacement);
      expect(replacement).not.toBe(orphan);
      expect(processAlive(orphan)).toBe(false);

      procs[1]!.kill("SIGTERM");
      expect(await procs[1]!.exited).toBe(0);
      await core.next("NodeDrop");
      const last = core.messages.all.filter((m) => m.kind === "PotStatusUpdate").at(-1)!;
      expect(last.payload).toMatchObject({ pot_id: "p1", status: "Stopped", message: "stopped with the node" });
      expect(processAlive(replacement)).toBe(false);
    } finally {
      for (const p of procs) p.kill("SIGKILL");
      for (const pid of pots) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {}
      }
    }
  });

  test("a bad flag fails fast with the key named", async () => {
    const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "node", "--core", "localhost", "--log-level", "silent"], { stdout: "pipe", stderr: "pipe" });
    expect(await p.exited).toBe(1);
    expect(await new Response(p.stderr).text()).toContain('invalid value for "core": "localhost" (expected HOST:PORT');
  });

  test("a catalogue that does not exist fails fast", async () => {
    using dir = tempDir();
    const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "node", "--data", dir.path, "--catalogue", join(dir.path, "nope"), "--log-level", "silent"], { stdout: "pipe", stderr: "pipe" });
    expect(await p.exited).toBe(1);
    expect(await new Response(p.stderr).text()).toContain(`invalid value for "catalogue": ${join(dir.path, "nope")} is neither a directory nor a git URL`);
  });

  describe("its honeypots do not outlive it", () => {
    async function nodeWithHoneypot(core: FakeCore, data: string) {
      // The built-in honnypotter keeps the runtime contract: it watches the node's stdin pipe.
      const proc = spawnNode(core, data, "");
      const reg = await core.next("NodeRegistration");
      const r = await core.command(reg.node_id, { InstallPot: { pot_id: "wp", honeypot_type: "honnypotter", config: { http_port: String(freePort()) }, auto_start: true } });
      expect(r.ok).toBe(true);
      return { proc, pot: pidOf(await core.status("wp", "Running")) };
    }

    test("SIGKILL of the node: the honeypot notices its stdin pipe close and exits by itself", async () => {
      using core = FakeCore.start();
      using dir = tempDir();
      const { proc, pot } = await nodeWithHoneypot(core, dir.path);
      try {
        expect(processAlive(pot)).toBe(true);
        proc.kill("SIGKILL");
        await proc.exited;
        // Not our child: nothing to await but its disappearance.
        await until(() => !processAlive(pot), `honeypot ${pot} to exit`, 1000);
      } finally {
        try {
          process.kill(-pot, "SIGKILL");
        } catch {}
      }
    });

    test("SIGHUP stops the node cleanly: honeypots stopped, NodeDrop, exit 0", async () => {
      using core = FakeCore.start();
      using dir = tempDir();
      const { proc, pot } = await nodeWithHoneypot(core, dir.path);
      try {
        proc.kill("SIGHUP");
        expect(await proc.exited).toBe(0);
        await core.next("NodeDrop");
        expect(processAlive(pot)).toBe(false);
      } finally {
        proc.kill("SIGKILL");
        try {
          process.kill(-pot, "SIGKILL");
        } catch {}
      }
    });
  });
});
