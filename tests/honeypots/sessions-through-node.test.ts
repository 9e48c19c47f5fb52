/**
 * The six network-service kinds as an operator runs them: Core and a node agent, each kind
 * installed through Core's REST API (InstallPot), attacked with its real client, and what the
 * attack left read back from Core's sessions API, the way Cowrie's sessions are: the logins with
 * their passwords, the commands, the files with their hashes, and the files themselves stored on
 * Core as artifacts. The node supervises them as it does any pot: one killed is started again.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { freePort, getJson, startTestCore, type TestCore, until } from "../helpers";
import { requireTool } from "../helpers/clients";
import { removeDir, run } from "./harness";

const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

let core: TestCore;
let node: Awaited<ReturnType<typeof startNode>>;
let work: string;
/** Each kind's service port, as installed. */
const port: Record<string, number> = {};

async function api(path: string): Promise<any> {
  const r = await getJson(`${core.api}${path}`);
  expect({ path, status: r.status }).toEqual({ path, status: 200 });
  return r.body;
}

/**
 * Waits for a closed session of `kind` that `ready` accepts, with its page (sessions are built as
 * events are stored). A session's row names the credentials of its successful login only, as
 * Cowrie's do; its page lists every attempt.
 */
async function sessionOf(kind: string, ready: (row: any, page: any) => boolean): Promise<{ row: any; page: any }> {
  let seen: any[] = [];
  const found = await until(
    async () => {
      seen = (await api(`/api/v1/sessions?pot_type=${kind}&limit=100`)).sessions;
      for (const row of seen.filter((s) => s.closed)) {
        const page = await api(`/api/v1/sessions/${row.id}`);
        if (ready(row, page)) return { row, page };
      }
      return null;
    },
    `a closed ${kind} session in the sessions API`,
    1000,
  ).catch((err) => {
    throw new Error(`${err.message}; the ${kind} sessions there: ${JSON.stringify(seen, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
  });
  return found!;
}

/** The artifact, once the node has sent all of it to Core. */
async function artifact(sha: string): Promise<any> {
  return until(
    async () => {
      const r = await getJson(`${core.api}/api/v1/artifacts/${sha}`);
      return r.status === 200 && r.body.stored ? r.body : null;
    },
    `artifact ${sha} stored on Core`,
    3000,
  );
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "honeybee-sessions-node-"));
  core = await startTestCore({ db: join(work, "core.db") });
  node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(work, "node"), name: "sensor", relay_port: 0, log_level: "silent", heartbeat_ms: 200, reconnect_min_ms: 10, reconnect_max_ms: 200 },
    silentLogger(),
  );
  await until(() => core.registry.link(node.nodeId), "the node's registration");
  const kinds: [string, Record<string, string>][] = [
    ["redis", { redis_port: "" }],
    ["mysql", { mysql_port: "" }],
    ["adb", { adb_port: "" }],
    ["docker", { docker_port: "" }],
    ["web", { http_port: "", https_port: String(freePort()) }],
    ["tcp", { ports: "" }],
  ];
  for (const [kind, config] of kinds) {
    const key = Object.keys(config)[0]!;
    port[kind] = freePort();
    const r = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ InstallPot: { pot_id: `${kind}-1`, honeypot_type: kind, config: { ...config, [key]: String(port[kind]) }, auto_start: true } }),
    });
    expect({ kind, status: r.status }).toEqual({ kind, status: 202 });
    const done = await until(async () => {
      const c = (await api(`/api/v1/commands/${r.body.command_id}`)) as any;
      return c.status !== "sent" && c;
    }, `${kind}'s install`);
    expect({ kind, status: done.status }).toEqual({ kind, status: "succeeded" });
  }
  await until(async () => {
    const pots = (await api("/api/v1/honeypots")).honeypots as any[];
    return pots.length === kinds.length && pots.every((p) => p.status === "Running");
  }, "every pot Running");
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await core?.[Symbol.asyncDispose]();
  removeDir(work);
});

describe("a node's pots of every network-service kind, read back from the sessions API", () => {
  test("redis: redis-cli's AUTH is the session's login, every command is there, the SSH key SAVE wrote is a file and an artifact", async () => {
    const key = `ssh-rsa AAAAB3NzaC1yc2E${randomBytes(8).toString("hex")} root@attacker`;
    const script = ["AUTH default hunter2", `SET k "\\n\\n${key}\\n\\n"`, "CONFIG SET dir /root/.ssh", "CONFIG SET dbfilename authorized_keys", "SAVE", ""].join("\n");
    const r = await run([requireTool("redis-cli"), "-h", "127.0.0.1", "-p", String(port.redis)], script);
    expect(r.stdout).toBe("OK\nOK\nOK\nOK\nOK\n");
    const { row, page } = await sessionOf("redis", (s) => s.files > 0);
    expect(row).toMatchObject({ node_id: node.nodeId, pot_id: "redis-1", src_ip: "127.0.0.1", login_success: true, username: "default", password: "hunter2", commands: page.command_lines.length, files: 1 });
    expect(page.credentials).toEqual([{ timestamp: expect.any(String), username: "default", password: "hunter2", success: true }]);
    // redis-cli asks for COMMAND DOCS first, for its hints.
    expect(page.command_lines.map((c: any) => c.input)).toEqual(["COMMAND DOCS", "AUTH default hunter2", `SET k "\\x0a\\x0a${key}\\x0a\\x0a"`, "CONFIG SET dir /root/.ssh", "CONFIG SET dbfilename authorized_keys", "SAVE"]);
    const kept = `\n\n${key}\n\n`;
    expect(page.file_events).toEqual([expect.objectContaining({ event_type: "redis.session.file_upload", filename: "authorized_keys", shasum: sha256(kept) })]);
    expect(await artifact(sha256(kept))).toMatchObject({ size: kept.length, sessions: [row.session] });
  });

  test("mysql: the mariadb client's login and queries; a refused login is a credential too", async () => {
    const mariadb = (...args: string[]) => run([requireTool("mariadb"), "--no-defaults", "--connect-timeout=20", "-h", "127.0.0.1", "-P", String(port.mysql), ...args]);
    expect(await mariadb("-u", "root", "-proot", "-N", "-e", "SELECT @@version; SHOW DATABASES")).toMatchObject({ code: 0, stdout: expect.stringContaining("8.0.39\n") });
    expect((await mariadb("-u", "admin", "-pnot-it", "-e", "SELECT 1")).stderr).toContain("Access denied for user 'admin'");
    const ok = await sessionOf("mysql", (row) => row.login_success === true);
    expect(ok.row).toMatchObject({ pot_id: "mysql-1", username: "root", password: "root", commands: expect.any(Number) });
    expect(ok.page.credentials).toEqual([{ timestamp: expect.any(String), username: "root", password: "root", success: true }]);
    expect(ok.page.command_lines.map((c: any) => c.input)).toContain("SELECT @@version");
    expect(ok.page.command_lines.map((c: any) => c.input)).toContain("SHOW DATABASES");
    const refused = await sessionOf("mysql", (row, page) => row.login_success === false && page.credentials.length > 0);
    expect(refused.page.credentials).toEqual([{ timestamp: expect.any(String), username: "admin", password: "not-it", success: false }]);
  });

  test("adb: Debian's adb connects, pushes a file and runs a shell command; the push is a file and an artifact", async () => {
    const home = join(work, "adb-home");
    mkdirSync(home);
    const env = { PATH: process.env.PATH ?? "", HOME: home, TMPDIR: work, ADB_SERVER_SOCKET: `tcp:localhost:${freePort()}` };
    const adb = (...args: string[]) => run([requireTool("adb"), ...args], undefined, env);
    const serial = `127.0.0.1:${port.adb}`;
    const payload = Buffer.concat([Buffer.from("#!/system/bin/sh\n"), randomBytes(4096)]);
    const local = join(work, "payload.bin");
    writeFileSync(local, payload);
    try {
      expect((await adb("start-server")).code).toBe(0);
      expect((await adb("connect", serial)).stdout).toContain(`connected to ${serial}`);
      expect((await adb("-s", serial, "push", local, "/data/local/tmp/payload")).code).toBe(0);
      expect(await adb("-s", serial, "shell", "getprop ro.product.model")).toMatchObject({ code: 0, stdout: "Pixel 4a\n" });
    } finally {
      await adb("kill-server");
    }
    const { row, page } = await sessionOf("adb", (s) => s.files > 0 && s.commands > 0);
    expect(row).toMatchObject({ pot_id: "adb-1", files: 1 });
    expect(page.command_lines.map((c: any) => c.input)).toContain("getprop ro.product.model");
    expect(page.file_events).toEqual([expect.objectContaining({ event_type: "adb.session.file_upload", filename: "/data/local/tmp/payload", shasum: sha256(payload) })]);
    expect(await artifact(sha256(payload))).toMatchObject({ size: payload.length, sessions: [row.session] });
  });

  test("docker: the docker client's run is the session's command, its cp a file and an artifact", async () => {
    const home = join(work, "docker-home");
    const env = { PATH: process.env.PATH ?? "", HOME: home, DOCKER_CONFIG: join(home, ".docker"), DOCKER_CLI_HINTS: "false" };
    const docker = (...args: string[]) => run([requireTool("docker"), "-H", `tcp://127.0.0.1:${port.docker}`, ...args], undefined, env);
    const started = await docker("run", "-d", "--privileged", "-v", "/:/mnt", "alpine", "sh", "-c", "chroot /mnt id");
    expect(started.code).toBe(0);
    const id = started.stdout.trim();
    const miner = join(work, "xmrig");
    const bytes = randomBytes(2048);
    writeFileSync(miner, bytes);
    expect((await docker("cp", miner, `${id}:/tmp/xmrig`)).code).toBe(0);
    const run1 = await sessionOf("docker", (s) => s.commands > 0);
    expect(run1.page.command_lines.map((c: any) => c.input)).toContain("sh -c 'chroot /mnt id'");
    const copy = await sessionOf("docker", (s) => s.files > 0);
    expect(copy.page.file_events).toEqual([expect.objectContaining({ event_type: "docker.session.file_upload", filename: "xmrig", shasum: expect.stringMatching(/^[0-9a-f]{64}$/) })]);
    // The artifact is the tar the client PUT, which holds the file.
    const tar = await artifact(copy.page.file_events[0].shasum);
    expect(tar.sessions).toEqual([copy.row.session]);
  });

  test("web: a login curl posts is the session's credential", async () => {
    const r = await run([requireTool("curl"), "-s", "-o", "/dev/null", "-w", "%{http_code}", "-d", "log=admin&pwd=hunter2", `http://127.0.0.1:${port.web}/wp-login.php`]);
    expect(r.stdout).toMatch(/^[2-4]\d\d$/);
    const { row, page } = await sessionOf("web", (_row, page) => page.credentials.length > 0);
    expect(row).toMatchObject({ pot_id: "web-1", login_success: false });
    expect(page.credentials).toEqual([{ timestamp: expect.any(String), username: "admin", password: "hunter2", success: false }]);
  });

  test("supervised by the node: a pot killed outright is restarted and answers again; StopPot closes its port", async () => {
    const ping = () => run([requireTool("redis-cli"), "-h", "127.0.0.1", "-p", String(port.redis), "PING"]);
    const status = async () => ((await api("/api/v1/honeypots")).honeypots as any[]).find((p) => p.pot_id === "redis-1")?.status;
    const pid = node.supervisor.status("redis-1")!.pid!;
    process.kill(pid, "SIGKILL");
    await until(async () => node.supervisor.status("redis-1")?.pid !== pid && (await status()) === "Running" && (await ping()).stdout === "PONG\n", "redis-1 restarted and answering", 3000);
    const stop = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ StopPot: "redis-1" }) });
    expect(stop.status).toBe(202);
    await until(async () => (await status()) === "Stopped", "redis-1 Stopped", 3000);
    expect((await ping()).stdout).not.toBe("PONG\n");
  });

  test("tcp: nc's connection is a session with its payload", async () => {
    const r = await run([requireTool("nc"), "-q", "1", "127.0.0.1", String(port.tcp)], "hello honeypot\n");
    expect(r.code).toBe(0);
    const { row, page } = await sessionOf("tcp", () => true);
    expect(row).toMatchObject({ pot_id: "tcp-1", src_ip: "127.0.0.1", events: 3 });
    expect(page.session_events.map((e: any) => e.event_type)).toEqual(["tcp.session.connect", "tcp.payload", "tcp.session.closed"]);
  });
});
