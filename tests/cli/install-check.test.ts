import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { silentLogger } from "../../src/log";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { freePort, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { FAST, FIXTURE_CATALOGUE } from "../node/node-helpers";
import { cli } from "./cli-helpers";

async function startAgent(core: TestCore, data: string, catalogue?: string): Promise<NodeHandle & AsyncDisposable> {
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(data, "node"), name: "sensor-1", relay_port: 0, log_level: "silent", ...(catalogue ? { catalogue } : {}), ...FAST },
    silentLogger(),
  );
  await until(() => core.registry.link(node.nodeId), "the node's registration");
  return Object.assign(node, { [Symbol.asyncDispose]: () => node.stop() });
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1);

describe("honeybee install", () => {
  test("a kind or config the node's catalogue refuses: Core's reason, exit 2, nothing left behind", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using _node = await startAgent(core, dir.path);
    const kind = await cli(["install", "sensor-1", "mailpot", "--pot-id", "mail-01"], core);
    expect(kind).toMatchObject({ code: 2, stdout: "" });
    expect(lastLine(kind.stderr)).toStartWith('honeybee: unknown honeypot kind "mailpot"; known kinds: ');
    expect(lastLine(kind.stderr)).toContain("cowrie (ssh-telnet, ssh)");
    const port = await cli(["install", "sensor-1", "cowrie", "--pot-id", "ssh-01", "-c", "ssh_port=99999", "--start"], core);
    expect(port.code).toBe(2);
    expect(lastLine(port.stderr)).toStartWith('honeybee: config key ssh_port is a port: "99999" is not a number from 1 to 65535');
    expect((await cli(["pots", "--json"], core)).json).toEqual({ honeypots: [] });
  });

  test("a pot that fails on the node stays Failed, and the error says how to remove it", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path, FIXTURE_CATALOGUE);
    const failed = await cli(["install", "sensor-1", "testpot", "--pot-id", "bad-1", "-c", `listen_port=${freePort()}`, "-c", "install_mode=fail"], core);
    expect(failed.code).toBe(1);
    expect(lastLine(failed.stderr)).toMatch(new RegExp(`^honeybee: bad-1 failed on node sensor-1 \\(${node.nodeId}\\): .*; bad-1 stays listed as Failed: remove it with "honeybee remove ${node.nodeId} bad-1"$`));
    expect((await cli(["remove", String(node.nodeId), "bad-1"], core)).code).toBe(0);
    expect((await cli(["pots", "--json"], core)).json).toEqual({ honeypots: [] });
  });
});
