/**
 * Makes sure the programs the tests drive are installed; npm runs it before `npm test`
 * ("pretest"), so the README's test command alone works on a fresh Debian machine.
 *
 * Nothing missing: prints nothing. Missing and apt-get usable (root, or sudo without a
 * password): one `apt-get update`, then installs just the missing packages, quietly. Otherwise
 * it names the exact command to run and fails, rather than letting tests fail one by one.
 *
 *   bun scripts/test-deps.ts           check, install what is missing
 *   bun scripts/test-deps.ts --check   check only; exit 1 and say what is missing
 */

/**
 * Program → the Debian package that provides it, and which tests use it. `paths`: where Debian
 * puts it when that is not on every user's PATH (globs; the highest version wins).
 */
export const TEST_TOOLS: readonly { command: readonly string[]; pkg: string; usedBy: string; paths?: readonly string[] }[] = [
  { command: ["ssh"], pkg: "openssh-client", usedBy: "the cowrie, walkthrough and end-to-end tests (a real OpenSSH client)" },
  { command: ["scp"], pkg: "openssh-client", usedBy: "the artifact tests (uploads with OpenSSH's scp)" },
  { command: ["sftp"], pkg: "openssh-client", usedBy: "the artifact tests (uploads with OpenSSH's sftp)" },
  { command: ["unzip"], pkg: "unzip", usedBy: "the artifact tests (the download is a zip encrypted with `infected`)" },
  { command: ["7z"], pkg: "p7zip-full", usedBy: "the artifact tests (the AES-encrypted download)" },
  { command: ["curl"], pkg: "curl", usedBy: "the honnypotter and end-to-end tests" },
  { command: ["git"], pkg: "git", usedBy: "the git catalogue tests" },
  { command: ["openssl"], pkg: "openssl", usedBy: "the TLS tests (test certificates)" },
  { command: ["chromium", "chromium-browser"], pkg: "chromium", usedBy: "the Swagger UI and console tests (headless browser)" },
  { command: ["ip"], pkg: "iproute2", usedBy: "the README walkthrough test (its own network namespace)" },
  { command: ["redis-cli"], pkg: "redis-tools", usedBy: "the redis honeypot tests (a real Redis client)" },
  { command: ["mariadb"], pkg: "mariadb-client", usedBy: "the mysql honeypot tests (a real MySQL client)" },
  { command: ["adb"], pkg: "adb", usedBy: "the adb honeypot tests (a real Android Debug Bridge client)" },
  { command: ["docker"], pkg: "docker.io", usedBy: "the docker honeypot tests (the real Docker client; no engine is started)" },
  { command: ["nmap"], pkg: "nmap", usedBy: "the honeypot realism tests (nmap -sV must name each emulated product)" },
  { command: ["nc"], pkg: "netcat-openbsd", usedBy: "the tcp catch-all honeypot tests" },
  { command: ["rsyslogd"], pkg: "rsyslog", usedBy: "the syslog output tests (a private rsyslogd; it is in /usr/sbin, which must be on PATH)" },
  // Debian keeps the server programs in a folder per major version, outside PATH.
  { command: ["initdb"], pkg: "postgresql", paths: ["/usr/lib/postgresql/*/bin/initdb"], usedBy: "the scale-out tests that stop or kill PostgreSQL (a private server in a temporary folder)" },
  { command: ["pg_ctl"], pkg: "postgresql", paths: ["/usr/lib/postgresql/*/bin/pg_ctl"], usedBy: "the scale-out tests that stop or kill PostgreSQL (a private server in a temporary folder)" },
  { command: ["nats-server"], pkg: "nats-server", paths: ["/usr/sbin/nats-server"], usedBy: "the scale-out tests that stop or kill NATS (private JetStream servers and clusters)" },
];

export type TestTool = (typeof TEST_TOOLS)[number];

/** The file system root `paths` are looked under: "/" but in this script's own tests. */
const ROOT = process.env.TEST_DEPS_ROOT ?? "/";

/** Version-aware order, so that .../postgresql/16/... comes after .../postgresql/9/... */
const byVersion = (a: string, b: string) => a.localeCompare(b, "en", { numeric: true });

/** The path of the first of the tool's commands found on PATH, else in its `paths`, or null. */
export function findTool(tool: TestTool): string | null {
  for (const c of tool.command) {
    const path = Bun.which(c);
    if (path) return path;
  }
  for (const pattern of tool.paths ?? []) {
    const found = [...new Bun.Glob(pattern.replace(/^\//, "")).scanSync({ cwd: ROOT, absolute: true, onlyFiles: true })].sort(byVersion);
    if (found.length > 0) return found[found.length - 1]!;
  }
  return null;
}

function missing(): TestTool[] {
  return TEST_TOOLS.filter((t) => findTool(t) === null);
}

function installCommand(pkgs: string[]): string {
  return `apt-get install -y ${pkgs.join(" ")}`;
}

/** How to run apt-get here: directly as root, through sudo when it needs no password, or not at all. */
function aptPrefix(): string[] | null {
  if (!Bun.which("apt-get")) return null;
  if (process.getuid?.() === 0) return [];
  if (Bun.which("sudo") && Bun.spawnSync(["sudo", "-n", "true"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0) return ["sudo", "-n"];
  return null;
}

function apt(prefix: string[], args: string[]): { ok: boolean; output: string } {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  // Another apt-get (a package update, a second test run) holds dpkg's lock for a while: wait for it rather than fail.
  const r = Bun.spawnSync([...prefix, "apt-get", "-o", "DPkg::Lock::Timeout=600", ...args], { env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  return { ok: r.exitCode === 0, output: `${r.stdout.toString()}${r.stderr.toString()}`.trim() };
}

function fail(lack: TestTool[], why: string): never {
  const pkgs = [...new Set(lack.map((t) => t.pkg))];
  console.error(`test-deps: the tests need ${lack.map((t) => `${t.command[0]} (${t.pkg}: ${t.usedBy})`).join(", ")}.`);
  console.error(`test-deps: ${why}. Install them, then run the tests again:\n\n    ${installCommand(pkgs)}\n`);
  process.exit(1);
}

function main(): void {
  const lack = missing();
  if (lack.length === 0) return;
  if (process.argv.includes("--check")) fail(lack, "not installed");
  const prefix = aptPrefix();
  if (!prefix) fail(lack, Bun.which("apt-get") ? "apt-get needs root (or sudo without a password) to install them" : "this is not a Debian-like system with apt-get");
  const pkgs = [...new Set(lack.map((t) => t.pkg))];
  console.error(`test-deps: installing ${pkgs.join(", ")} with apt-get (needed by ${lack.map((t) => t.usedBy).join("; ")})`);
  const update = apt(prefix, ["update", "-qq"]);
  if (!update.ok) fail(lack, `apt-get update failed:\n${update.output}\n`);
  const install = apt(prefix, ["install", "-y", "-qq", "--no-install-recommends", ...pkgs]);
  if (!install.ok) fail(lack, `apt-get install failed:\n${install.output}\n`);
  const still = missing();
  if (still.length > 0) fail(still, "apt-get installed the packages, but the programs are still not on PATH");
}

if (import.meta.main) main();
