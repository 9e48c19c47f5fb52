import { describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FakeCore } from "../helpers/fake-core";
import { freePort, tempDir } from "../helpers";
import { FIXTURE_CATALOGUE, startTestNode } from "./node-helpers";

function git(cwd: string, ...args: string[]): void {
  const r = Bun.spawnSync(["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main", ...args], { cwd, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
}

/** A catalogue repository: main holds the fixture kind; branch v2 adds the alias "branchpot". */
function makeRepo(root: string): string {
  const repo = join(root, "catalogue-repo");
  cpSync(FIXTURE_CATALOGUE, repo, { recursive: true });
  git(repo, "init", "-q");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "catalogue");
  git(repo, "checkout", "-q", "-b", "v2");
  const file = join(repo, "testpot", "manifest.json");
  const manifest = JSON.parse(readFileSync(file, "utf8"));
  manifest.aliases.push("branchpot");
  writeFileSync(file, JSON.stringify(manifest));
  git(repo, "commit", "-q", "-am", "v2");
  git(repo, "checkout", "-q", "main");
  return repo;
}

describe("git catalogues", () => {
  test("InstallPot's git_url (a file URL) and git_branch override the node's default", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    const repo = makeRepo(dir.path);
    await using node = await startTestNode(core, join(dir.path, "node"), { git_allow: `file://${dir.path}/,${dir.path}/` });
    await core.next("NodeRegistration");

    const install = (pot_id: string, honeypot_type: string, extra: object) =>
      core.command(node.nodeId, { InstallPot: { pot_id, honeypot_type, config: { listen_port: String(freePort()) }, auto_start: true, ...extra } });

    const r1 = await install("from-git", "testpot", { git_url: `file://${repo}` });
    expect(r1).toMatchObject({ ok: true });
    expect((await core.status("from-git", "Running")).pot_type).toBe("testpot");
    // A copy, not a working tree.
    expect(existsSync(join(node.dataDir, "pots", "from-git", ".git"))).toBe(false);

    const r2 = await install("main-branch", "branchpot", { git_url: repo });
    expect(r2.ok).toBe(false);
    expect(r2.message).toContain('unknown honeypot kind "branchpot"');

    const r3 = await install("v2-branch", "branchpot", { git_url: repo, git_branch: "v2" });
    expect(r3).toMatchObject({ ok: true });
    expect((await core.status("v2-branch", "Running")).pot_type).toBe("testpot");

    const r4 = await install("no-branch", "testpot", { git_url: repo, git_branch: "v9" });
    expect(r4.ok).toBe(false);
    expect(r4.message).toMatch(/is unreachable: .*v9/);
  });

  test("a git repository as the node's default catalogue (--catalogue URL --catalogue-branch B)", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    const repo = makeRepo(dir.path);
    await using node = await startTestNode(core, join(dir.path, "node"), { catalogue: `file://${repo}`, catalogue_branch: "v2" });
    await core.next("NodeRegistration");
    const r = await core.command(node.nodeId, { InstallPot: { pot_id: "p", honeypot_type: "branchpot", config: { listen_port: String(freePort()) }, auto_start: false } });
    expect(r).toMatchObject({ ok: true, message: "installed testpot as p" });
    // The clone is gone once the pot is installed.
    expect(readdirSync(join(node.dataDir, "tmp"))).toEqual([]);
  });

  test("git_allow: a `..` (plain or escaped) or a sibling folder cannot reach a repository outside the allowed folder", async () => {
    using core = FakeCore.start();
    using dir = tempDir();
    const allowedDir = join(dir.path, "allowed");
    mkdirSync(allowedDir);
    // A repository outside the allowed folder whose install step leaves a mark if it ever runs.
    const evil = join(dir.path, "evil.git");
    cpSync(FIXTURE_CATALOGUE, evil, { recursive: true });
    const marker = join(dir.path, "pwned");
    writeFileSync(join(evil, "testpot", "install-fixture.ts"), `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`);
    git(evil, "init", "-q");
    git(evil, "add", ".");
    git(evil, "commit", "-q", "-m", "evil");
    const sibling = join(dir.path, "allowed-evil");
    cpSync(evil, sibling, { recursive: true });
    const inside = makeRepo(allowedDir);

    await using node = await startTestNode(core, join(dir.path, "node"), { git_allow: `file://${allowedDir}` });
    await core.next("NodeRegistration");
    const install = (pot_id: string, git_url: string) =>
      core.command(node.nodeId, { InstallPot: { pot_id, honeypot_type: "testpot", config: { listen_port: String(freePort()) }, auto_start: false, git_url } });

    for (const [i, git_url] of [`file://${allowedDir}/../evil.git`, `file://${allowedDir}/%2e%2e/evil.git`, `file://${sibling}`].entries()) {
      const r = await install(`evil-${i}`, git_url);
      expect(r).toMatchObject({ ok: false, message: `git_url ${git_url} is not allowed on this node; its operator can add it to git_allow (now: file://${allowedDir})` });
    }
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(node.dataDir, "pots"))).toBe(false);

    // A `..` that stays inside the folder is fine: the normalised URL is cloned.
    const ok = await install("inside", `file://${allowedDir}/sub/../${inside.slice(allowedDir.length + 1)}`);
    expect(ok).toMatchObject({ ok: true, message: "installed testpot as inside" });
    expect((await core.status("inside", "Stopped")).message).toBe(`installed from file://${inside}`);
  });
});
