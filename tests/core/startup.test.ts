import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadCoreConfig } from "../../src/config";
import { BIG_ID, BUN, ROOT, getJson, registerNode, startTestCore, tempDir } from "../helpers";

const MAIN = join(ROOT, "src", "main.ts");
const ZERO_PORTS = ["--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0"];

/** Starts `honeybee core` as a real process and reads its ports from the start-up log line. */
async function spawnCore(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([BUN, MAIN, "core", ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, HONEYBEE_LOG_LEVEL: "info", ...env },
  });
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const line = text.split("\n").find((l) => l.includes('"core started"'));
    if (line) {
      reader.releaseLock();
      return { proc, ports: JSON.parse(line).ports as Record<string, number> };
    }
  }
  throw new Error(`core did not start: ${text}${await new Response(proc.stderr).text()}`);
}

describe("configuration", () => {
  test("layers: defaults < file < env < flags", () => {
    using dir = tempDir();
    const file = join(dir.path, "core.json");
    writeFileSync(file, JSON.stringify({ api_port: 1000, ws_port: 1001, event_port: 1002 }));
    const c = loadCoreConfig({ config: file, event_port: "3000" }, { HONEYBEE_WS_PORT: "2000", HONEYBEE_EVENT_PORT: "2001" });
    expect({ node: c.node_port, api: c.api_port, ws: c.ws_port, event: c.event_port, host: c.host }).toEqual({
      node: 9001,
      api: 1000,
      ws: 2000,
      event: 3000,
      host: "127.0.0.1",
    });
    expect(c.db).toBe("./data/honeybee.db");
  });

  test("a bad value names its key", () => {
    expect(() => loadCoreConfig({ api_port: "70000" }, {})).toThrow(/"api_port"/);
    expect(() => loadCoreConfig({}, { HONEYBEE_LOG_LEVEL: "loud" })).toThrow(/"log_level"/);
    expect(() => loadCoreConfig({ node_port: "abc" }, {})).toThrow(ConfigError);
    expect(() => loadCoreConfig({ colour: "blue" }, {})).toThrow(/unknown configuration key "colour"/);
  });

  test("the process refuses a bad value with a one-line message and exit code 1", async () => {
    const proc = Bun.spawn([BUN, MAIN, "core", "--api-port", "nope"], { stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(1);
    const err = await new Response(proc.stderr).text();
    expect(err).toStartWith('honeybee: invalid value for "api_port"');
    expect(err.trim().split("\n")).toHaveLength(1);
  });
});

describe("process lifecycle", () => {
  test.each(["node_port", "api_port", "ws_port", "event_port"])("a %s already in use stops start-up with a message naming it", async (key) => {
    const blocker = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      using dir = tempDir();
      const flag = "--" + key.replace("_", "-");
      const proc = Bun.spawn([BUN, MAIN, "core", ...ZERO_PORTS, flag, String(blocker.port), "--db", join(dir.path, "x.db")], { stdout: "pipe", stderr: "pipe" });
      expect(await proc.exited).toBe(1);
      const err = await new Response(proc.stderr).text();
      expect(err).toContain(`127.0.0.1:${blocker.port} (${key})`);
      expect(err).toContain("already in use");
      expect(err).not.toContain("    at ");
    } finally {
      blocker.stop(true);
    }
  });

  test("SIGTERM closes everything and exits 0", async () => {
    using dir = tempDir();
    const { proc, ports } = await spawnCore([...ZERO_PORTS, "--db", join(dir.path, "core.db")]);
    expect((await getJson(`http://127.0.0.1:${ports.api}/health`)).status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(fetch(`http://127.0.0.1:${ports.api}/health`)).rejects.toThrow();
  });

  test("the registry survives a restart; nodes come back Unknown", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    {
      await using core = await startTestCore({ db });
      using node = await registerNode(core);
      const seen = Promise.withResolvers<void>();
      core.bus.subscribe((m) => m.kind === "PotStatusUpdate" && seen.resolve());
      node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", status: "Running" });
      await seen.promise;
    }
    await using core = await startTestCore({ db });
    expect((await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`)).body).toEqual({
      node_id: BIG_ID,
      node_name: "sensor-1",
      status: "Unknown",
      node_type: "Full",
      location: null,
      address: "127.0.0.1",
      port: 0,
      last_seen: expect.any(String),
      // Heartbeats are not kept across a restart of Core.
      last_heartbeat: null,
      health: null,
      honeypots: [{ pot_id: "ssh-1", pot_type: "cowrie", status: "Running" }],
    });
    using again = await registerNode(core);
    expect((await getJson(`${core.api}/api/v1/nodes`)).body.nodes[0].status).toBe("Connected");
    expect(again).toBeDefined();
  });
});
