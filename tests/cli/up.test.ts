import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { localNodeEnv } from "../../src/cli/up";
import { defaultCoreConfig } from "../../src/config";
import { newToken, sha256 } from "../../src/core/auth";
import { processRunning } from "../../src/node/orphans";
import { BUN, freePort, ROOT, tempDir, until } from "../helpers";
import { LiveProcess, MAIN, cli } from "./cli-helpers";

const ZERO = ["--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--relay-port", "0"];

/** `honeybee up` as a real process; resolves with its addresses once the summary is out. */
async function up(data: string, extra: string[] = []) {
  const proc = new LiveProcess([BUN, MAIN, "up", "--data", data, ...ZERO, ...extra], { cwd: ROOT });
  const text = await proc.waitFor("Ctrl-C stops the node, its honeypots and Core.");
  const api = text.match(/REST API\s+(http:\/\/\S+)/)![1]!;
  const ws = text.match(/WebSocket\s+(ws:\/\/\S+)/)![1]!;
  return { proc, text, core: { api, ws } };
}

describe("honeybee up", () => {
  test("runs Core and a node, says where everything listens, and stops both on Ctrl-C", async () => {
    using dir = tempDir();
    const { proc, text, core } = await up(dir.path, ["--name", "laptop"]);
    await using _p = proc;
    const nodes = await cli(["nodes", "--json"], core);
    expect(nodes.json.nodes).toEqual([{ node_id: expect.any(BigInt), node_name: "laptop", status: expect.stringMatching(/Connected|Running/), node_type: "Full" }]);
    const id = nodes.json.nodes[0].node_id;
    expect(text).toContain(`  Node          laptop, id ${id}, data in `);
    expect(text).toContain(`${core.api}/swagger`);
    const consoleUrl = text.match(/Console\s+(http:\/\/\S+)/)![1]!;
    expect(consoleUrl).toBe(`${core.api}/`);
    const page = await fetch(consoleUrl);
    expect({ status: page.status, title: (await page.text()).includes("<title>HoneyBee Core</title>") }).toEqual({ status: 200, title: true });
    expect(text).toMatch(/HONEYBEE_API=http:\/\/127\.0\.0\.1:\d+ HONEYBEE_WS=ws:\/\/127\.0\.0\.1:\d+ bin\/honeybee install laptop cowrie --pot-id ssh-01 --start/);
    expect(existsSync(join(dir.path, "honeybee.db"))).toBe(true);
    expect(existsSync(join(dir.path, "node"))).toBe(true);

    expect(await proc.stop("SIGINT")).toBe(0);
    // The node said goodbye and its process is gone with Core: nothing listens any more.
    expect((await cli(["nodes"], core)).code).toBe(1);
    const again = await up(dir.path, ["--name", "laptop"]);
    await using _again = again.proc;
    // Same data, same node id: the node's identity survives a restart.
    expect((await cli(["nodes", "--json"], again.core)).json.nodes.map((n: { node_id: bigint }) => n.node_id)).toEqual([id]);
    expect(await again.proc.stop("SIGTERM")).toBe(0);
  });

  test("a node that cannot start stops Core too, with the node's reason: exit 1", async () => {
    using dir = tempDir();
    const blocker = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const proc = new LiveProcess([BUN, MAIN, "up", "--data", dir.path, ...ZERO.slice(0, -2), "--relay-port", String(blocker.port)], { cwd: ROOT });
      expect(await proc.proc.exited).toBe(1);
      await proc.waitFor("before it registered with Core", "err");
      expect(proc.stderr).toContain(`honeybee: the node agent exited with code 1 before it registered with Core; see its messages above`);
      expect(proc.stderr).toContain(String(blocker.port));
    } finally {
      blocker.stop(true);
    }
  });

  test("a port in use or a bad flag: one line, exit 1 or 2", async () => {
    using dir = tempDir();
    const blocker = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      const busy = await cli(["up", "--data", dir.path, ...ZERO.slice(0, 2), "--api-port", String(blocker.port), ...ZERO.slice(4)]);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toBe(`honeybee: cannot listen on 127.0.0.1:${blocker.port} (api_port): the port is already in use; stop the other process or choose another port with --api-port\n`);
    } finally {
      blocker.stop(true);
    }
    expect(await cli(["up", "--colour"])).toMatchObject({ code: 2, stderr: `honeybee: unknown option '--colour'; see "honeybee up --help"\n` });
  });
});

/** The node agent's pid (its lock) and its honeypots' pids (pots.json) under `up`'s data directory. */
function nodePids(data: string): { node: number; pots: number[] } {
  const node = Number(readFileSync(join(data, "node", "node.lock"), "utf8").split(" ")[0]);
  const pots = (JSON.parse(readFileSync(join(data, "node", "pots.json"), "utf8")).pots as { pid?: number | null }[]).map((p) => p.pid).filter((p): p is number => typeof p === "number");
  return { node, pots };
}

/** Processes that are not our children have no exit event to await: look until they are gone. */
const gone = (pids: number[]) => until(() => pids.every((p) => !processRunning(p)), `processes ${pids.join(", ")} to exit`, 3000);

describe("nothing outlives up", () => {
  async function upWithHoneypot(data: string) {
    const u = await up(data);
    const r = await cli(["install", "local", "cowrie", "--pot-id", "ssh-01", "--start", "-c", `ssh_port=${freePort()}`, "-c", `telnet_port=${freePort()}`], u.core);
    expect(r).toMatchObject({ code: 0, stdout: expect.stringMatching(/^ssh-01 is Running on node local/) });
    const pids = nodePids(data);
    expect(pids.pots).toHaveLength(1);
    expect([pids.node, ...pids.pots].every(processRunning)).toBe(true);
    return { ...u, pids };
  }

  test("SIGKILL: the node agent and its honeypots exit by themselves, and the next up starts without cleanup", async () => {
    using dir = tempDir();
    const first = await upWithHoneypot(dir.path);
    await using _first = first.proc;
    first.proc.proc.kill("SIGKILL");
    await first.proc.proc.exited;
    await gone([first.pids.node, ...first.pids.pots]);

    const again = await up(dir.path);
    await using _again = again.proc;
    const pots = await cli(["pots", "--json"], again.core);
    expect(pots.json.honeypots).toEqual([expect.objectContaining({ pot_id: "ssh-01", pot_type: "cowrie" })]);
    expect(await again.proc.stop("SIGTERM")).toBe(0);
  });

  test("SIGHUP (its terminal closed) stops up like Ctrl-C: node, honeypots and Core, exit 0", async () => {
    using dir = tempDir();
    const u = await upWithHoneypot(dir.path);
    await using _u = u.proc;
    expect(await u.proc.stop("SIGHUP")).toBe(0);
    expect([u.pids.node, ...u.pids.pots].filter(processRunning)).toEqual([]);
    expect((await cli(["nodes"], u.core)).code).toBe(1);
    expect(existsSync(join(dir.path, "node", "node.lock"))).toBe(false);
  });
});

describe("up takes Core's and the node's configuration", () => {
  test("--insecure is accepted where up's own message asks for it", async () => {
    using dir = tempDir();
    const refused = await cli(["up", "--data", dir.path, "--host", "0.0.0.0", ...ZERO]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("or pass --insecure to accept the risk");
    const { proc } = await up(dir.path, ["--host", "0.0.0.0", "--insecure"]);
    await using _p = proc;
    expect(await proc.stop("SIGTERM")).toBe(0);
  });

  test("--config with API tokens and a node enrollment token: the local node enrolls, the API wants a token", async () => {
    using dir = tempDir();
    const token = newToken();
    const file = join(dir.path, "core.json");
    writeFileSync(file, JSON.stringify({ tokens: [{ name: "me", role: "operator", sha256: sha256(token) }], node_enrollment_token: "enroll-me-please-0123456789" }));
    const { proc, core } = await up(join(dir.path, "data"), ["--config", file, "--type", "Agent"]);
    await using _p = proc;
    expect((await cli(["nodes"], core)).code).toBe(1);
    const nodes = await cli(["nodes", "--json"], core, { HONEYBEE_TOKEN: token });
    expect(nodes.json.nodes).toEqual([expect.objectContaining({ node_name: "local", node_type: "Agent" })]);
    // Enrolled: the node now holds its TOTP secret, and Core knows it.
    expect(existsSync(join(dir.path, "data", "node", "totp_key"))).toBe(true);
    expect(await proc.stop("SIGTERM")).toBe(0);
  });

  test("the local node gets what Core asks of nodes, and none of Core's own settings", () => {
    const env = { PATH: "/usr/bin", HONEYBEE_CONFIG: "core.json", HONEYBEE_TLS_CERT: "core.pem", HONEYBEE_LOG_LEVEL: "debug", HONEYBEE_SPOOL_MAX_BYTES: "4096" };
    expect(localNodeEnv(defaultCoreConfig(), {}, env)).toEqual({ PATH: "/usr/bin", HONEYBEE_SPOOL_MAX_BYTES: "4096", HONEYBEE_EXIT_ON_STDIN_EOF: "1" });
    const secured = defaultCoreConfig({ node_enrollment_token: "s3cret-enrollment", tls_cert: "core.pem", tls_key: "core.key" });
    expect(localNodeEnv(secured, {}, {})).toEqual({ HONEYBEE_EXIT_ON_STDIN_EOF: "1", HONEYBEE_ENROLLMENT_TOKEN: "s3cret-enrollment", HONEYBEE_TLS_CA: "core.pem" });
    // What the node's own config file says wins.
    expect(localNodeEnv(secured, { tls_ca: "ca.pem", enrollment_token: "other" }, {})).toEqual({ HONEYBEE_EXIT_ON_STDIN_EOF: "1" });
    const mutual = defaultCoreConfig({ tls_cert: "core.pem", tls_key: "core.key", tls_ca: "ca.pem" });
    expect(() => localNodeEnv(mutual, {}, {})).toThrow("Core asks nodes for a client certificate (tls_ca): give the local node its tls_cert and tls_key in --node-config");
    expect(localNodeEnv(mutual, { tls_cert: "n.pem", tls_key: "n.key" }, {})).toMatchObject({ HONEYBEE_TLS_CA: "core.pem" });
  });
});
