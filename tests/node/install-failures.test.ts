import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { freePort } from "../helpers";
import { sharedNodeTest } from "./node-helpers";

const t = sharedNodeTest({ install_timeout_ms: 500, git_allow: "file:///nonexistent/" });

const install = (pot_id: string, config: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  t.core.command(t.node.nodeId, { InstallPot: { pot_id, honeypot_type: "testpot", config: { listen_port: String(freePort()), ...config }, auto_start: false, ...extra } });

async function expectFailed(potId: string, result: { ok: boolean; message: string }, pattern: RegExp) {
  expect(result.ok).toBe(false);
  expect(result.message).toMatch(pattern);
  const failed = await t.core.status(potId, "Failed");
  expect(failed.message).toMatch(pattern);
  return failed;
}

describe("InstallPot failures end in Failed with the reason", () => {
  test("unknown kind lists the known ones", async () => {
    const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: "k1", honeypot_type: "dionaea", config: {}, auto_start: true } });
    await expectFailed("k1", r, /unknown honeypot kind "dionaea"; known kinds: testpot \(test-pot, fixture-pot\)/);
  });

  test("unknown config key names the known keys", async () => {
    await expectFailed("c1", await install("c1", { sshport: "22" }), /unknown config key sshport for kind testpot \(known keys: listen_port, mode, install_mode, banner\)/);
  });

  test.each([["70000"], ["0"], ["ssh"], ["22.5"]])("port value %p is refused", async (value) => {
    const id = `p-${value.replace(/\W/g, "_")}`;
    await expectFailed(id, await install(id, { listen_port: value }), new RegExp(`config key listen_port is a port: "${value.replace(".", "\\.")}" is not a number from 1 to 65535`));
  });

  test("a value outside the key's schema is refused", async () => {
    await expectFailed("e1", await install("e1", { mode: "explode" }), /config key mode: "explode" is not one of normal, crash_on_start, ignore_sigterm, no_ready/);
    await expectFailed("e2", await install("e2", { banner: "x".repeat(33) }), /is longer than 32 characters/);
  });

  test("an integration key with another value is refused", async () => {
    await expectFailed("i1", await install("i1", { pot_id: "other" }), /config key pot_id is set by the node to "i1"/);
  });

  test("a port already in use", async () => {
    const busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      await expectFailed("u1", await install("u1", { listen_port: String(busy.port) }), new RegExp(`port ${busy.port} \\(listen_port\\) is already in use`));
    } finally {
      busy.stop(true);
    }
  });

  test("a port another pot of this node is configured for", async () => {
    const port = String(freePort());
    expect((await install("owner", { listen_port: port })).ok).toBe(true);
    await expectFailed("thief", await install("thief", { listen_port: port }), new RegExp(`port ${port} \\(listen_port\\) is already configured for pot owner`));
  });

  test("the relay's own port", async () => {
    await expectFailed("r1", await install("r1", { listen_port: String(t.node.ports.relay) }), /event relay port|already in use/);
  });

  test("a failing install step quotes its last lines, keeps the log, and leaves no half-installed pot", async () => {
    const failed = await expectFailed("f1", await install("f1", { install_mode: "fail" }), /install step 1 of 1 failed: .*install-fixture\.ts exited with code 7: .*left-pad@9\.9\.9 not found \| install aborted/);
    expect(failed.pot_type).toBe("testpot");
    expect(existsSync(join(t.node.dataDir, "pots", "f1"))).toBe(false);
    expect(readFileSync(join(t.node.dataDir, "logs", "f1", "install.log"), "utf8")).toContain("install aborted");
    // The same pot_id can be installed once the cause is fixed.
    expect((await install("f1")).ok).toBe(true);
  });

  test("an install step that runs past its time limit is killed", async () => {
    await expectFailed("h1", await install("h1", { install_mode: "hang" }), /did not finish within 500 ms and was killed; last output: resolving dependencies/);
  });

  test("an unreachable git catalogue", async () => {
    const r = await install("g1", {}, { git_url: "file:///nonexistent/catalogue.git" });
    await expectFailed("g1", r, /catalogue file:\/\/\/nonexistent\/catalogue\.git is unreachable: .*(does not appear to be a git repository|not found)/);
  });

  test.each([["ext::sh -c touch% /tmp/pwned"], ["--upload-pack=touch /tmp/pwned"], ["file:///etc"], ["file:///nonexistent-but-not-under-the-prefix"], ["https://attacker.example/catalogue.git"]])(
    "a git_url outside the node's allowlist is refused: %p",
    async (git_url) => {
      const r = await install("h1", {}, { git_url });
      await expectFailed("h1", r, /is not allowed on this node; its operator can add it to git_allow \(now: file:\/\/\/nonexistent\/\)/);
    },
  );

  test("git_branch with a directory catalogue", async () => {
    await expectFailed("b1", await install("b1", {}, { git_branch: "main" }), /git_branch main needs a git catalogue/);
  });
});

describe("refusals that must not invent a status", () => {
  test("pot_id already installed: ok:false, and the existing pot keeps its true status", async () => {
    expect((await install("dup")).ok).toBe(true);
    expect((await t.core.status("dup")).status).toBe("Installing");
    expect((await t.core.status("dup")).status).toBe("Stopped");
    const r = await install("dup");
    expect(r).toMatchObject({ ok: false, message: "pot_id dup is already installed on this node (kind testpot); choose another pot_id" });
    expect((await t.core.status("dup")).status).toBe("Stopped");
  });

  test("invalid pot_id (path characters) is refused with the rule", async () => {
    const r = await t.core.command(t.node.nodeId, { InstallPot: { pot_id: "../../etc", honeypot_type: "testpot", config: {}, auto_start: true } });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/^invalid pot_id "\.\.\/\.\.\/etc": use 1-64 letters/);
    expect(existsSync(join(t.node.dataDir, "etc"))).toBe(false);
    expect((await t.core.status("../../etc")).status).toBe("Failed");
  });

  test.each(["RemovePot", "GetPotLogs", "GetPotMetrics"])("%s with a path for a pot_id is refused by the node itself, and touches nothing", async (name) => {
    // pots/../../victim and logs/../../victim are both this folder beside the data directory.
    const victim = join(dirname(t.node.dataDir), `victim-${process.pid}-${name}`);
    mkdirSync(victim);
    try {
      const potId = `../../${basename(victim)}`;
      const r = await t.core.command(t.node.nodeId, { [name]: potId });
      expect(r).toMatchObject({ ok: false, message: expect.stringMatching(/^invalid pot_id "\.\.\/\.\.\/victim-.*": use 1-64 letters/) });
      expect(r.data).toBeUndefined();
      expect(existsSync(victim)).toBe(true);
    } finally {
      rmSync(victim, { recursive: true, force: true });
    }
  });

  test.each(["DeployPot", "StopPot", "RestartPot", "GetPotStatus", "GetPotInfo", "GetPotMetrics"])("%s of an unknown pot: CommandResult ok:false, no PotStatusUpdate", async (name) => {
    const r = await t.core.command(t.node.nodeId, { [name]: "ghost" });
    expect(r.ok).toBe(false);
    expect(r.message).toMatch(/^no pot ghost is installed on this node \(installed: .*\)$/);
    expect(t.core.messages.all.some((m) => m.kind === "PotStatusUpdate" && m.payload.pot_id === "ghost")).toBe(false);
  });

  test("a command for another node", async () => {
    const r = await t.core.command(t.node.nodeId + 1n, { GetInstalledPots: null });
    expect(r).toMatchObject({ ok: false, message: `command is for node ${t.node.nodeId + 1n}, this is node ${t.node.nodeId}` });
  });
});
