/**
 * `npm test` on a fresh machine: its pretest step (scripts/test-deps.ts) installs the programs
 * the tests drive, or says exactly what to install; and no test skips itself when one is missing.
 */
import { expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, tempDir } from "../helpers";

const SCRIPT = join(ROOT, "scripts", "test-deps.ts");

function deps(args: string[], path: string, root?: string) {
  const r = Bun.spawnSync([BUN, SCRIPT, ...args], { env: { ...process.env, PATH: path, ...(root ? { TEST_DEPS_ROOT: root } : {}) }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

test("npm's pretest runs the test-deps step, so `npm test` alone suffices", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  expect(pkg.scripts.pretest).toBe("bun scripts/test-deps.ts");
});

test("with the programs installed it checks quietly", () => {
  expect(deps(["--check"], process.env.PATH!)).toEqual({ code: 0, stdout: "", stderr: "" });
});

test("without them and without apt-get it names the exact command and fails", () => {
  using dir = tempDir();
  symlinkSync(BUN, join(dir.path, "bun"));
  // The folder is also the root of the places off PATH (PostgreSQL's per-version folder).
  const r = deps([], dir.path, dir.path);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("test-deps: the tests need ssh (openssh-client: ");
  expect(r.stderr).toContain("this is not a Debian-like system with apt-get");
  expect(r.stderr).toContain("\n    apt-get install -y openssh-client unzip p7zip-full curl git openssl chromium iproute2 redis-tools mariadb-client adb docker.io nmap netcat-openbsd rsyslog postgresql nats-server\n");
});

test("PostgreSQL's server programs are found in Debian's per-version folder, the newest version first", () => {
  using dir = tempDir();
  symlinkSync(BUN, join(dir.path, "bun"));
  for (const v of ["9.6", "16", "15"]) {
    const bin = join(dir.path, "usr", "lib", "postgresql", v, "bin");
    mkdirSync(bin, { recursive: true });
    for (const p of ["initdb", "pg_ctl"]) {
      writeFileSync(join(bin, p), "#!/bin/sh\n");
      chmodSync(join(bin, p), 0o755);
    }
  }
  const r = Bun.spawnSync([BUN, "-e", `import { TEST_TOOLS, findTool } from ${JSON.stringify(SCRIPT)}; console.log(JSON.stringify(TEST_TOOLS.filter((t) => t.pkg === "postgresql").map(findTool)))`], {
    env: { ...process.env, PATH: dir.path, TEST_DEPS_ROOT: dir.path },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(JSON.parse(r.stdout.toString())).toEqual([join(dir.path, "usr/lib/postgresql/16/bin/initdb"), join(dir.path, "usr/lib/postgresql/16/bin/pg_ctl")]);
  expect(deps(["--check"], dir.path, dir.path).stderr).not.toContain("initdb (postgresql");
});

test("no test skips itself or needs sshpass (OpenSSH takes passwords through SSH_ASKPASS)", () => {
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name) && p !== import.meta.path) {
        const text = readFileSync(p, "utf8");
        for (const bad of [/\.skipIf\(/, /\.skip\(/, /["'`]sshpass\b|sshpass -p/]) if (bad.test(text)) offenders.push(`${p.slice(ROOT.length + 1)}: ${bad.source}`);
      }
    }
  };
  walk(join(ROOT, "tests"));
  expect(offenders).toEqual([]);
});
