import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, tempDir } from "../helpers";
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
