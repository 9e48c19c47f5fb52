import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { catalogueDigest, loadCatalogue } from "../../src/catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../src/catalogue/paths";
import { silentLogger } from "../../src/log";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { FAST, FIXTURE_CATALOGUE } from "../node/node-helpers";

const post = (core: TestCore, nodeId: bigint, body: unknown) =>
  getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const install = (pot_id: string, honeypot_type: string, config: Record<string, string> = {}) => ({ InstallPot: { pot_id, honeypot_type, config, auto_start: false } });

/** A real node agent; the built-in catalogue unless another is given. */
async function startAgent(core: TestCore, data: string, catalogue?: string): Promise<NodeHandle & AsyncDisposable> {
  const node = await startNode(
    { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(data, "node"), name: "sensor-1", relay_port: 0, log_level: "silent", ...(catalogue ? { catalogue } : {}), ...FAST },
    silentLogger(),
  );
  await node.registered();
  await until(() => core.registry.link(node.nodeId), "the node's registration");
  return Object.assign(node, { [Symbol.asyncDispose]: () => node.stop() });
}

describe("an InstallPot Core can check against the node's catalogue", () => {
  test("an unknown kind, a bad value, an unknown key: 400 with the node's own reason, nothing registered or sent", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path);
    const cases: [unknown, string, string][] = [
      [install("mail-01", "mailpot"), "unknown_kind", 'unknown honeypot kind "mailpot"; known kinds: '],
      [install("ssh-01", "cowrie", { ssh_port: "99999" }), "invalid_config", 'config key ssh_port is a port: "99999" is not a number from 1 to 65535'],
      [install("ssh-01", "ssh", { colour: "red" }), "invalid_config", "unknown config key colour for kind cowrie (known keys: ssh_port, telnet_port, "],
      [install("web-01", "honnypotter", { pot_id: "web-02" }), "invalid_config", 'config key pot_id is set by the node to "web-01"; leave it out or send that value'],
      [install("web-01", "honnypotter", { http_port: "8080", log_path: "../../etc" }), "invalid_config", "config key log_path: "],
    ];
    for (const [command, code, reason] of cases) {
      const res = await post(core, node.nodeId, command);
      expect({ status: res.status, code: res.body.error.code }).toEqual({ status: 400, code });
      expect(res.body.error.message).toStartWith(reason);
    }
    expect((await post(core, node.nodeId, install("mail-01", "mailpot"))).body.error.message).toContain("cowrie (ssh-telnet, ssh)");
    expect((await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots).toEqual([]);
    expect((await getJson(`${core.api}/api/v1/commands`)).body.commands).toEqual([]);
    const listed = await post(core, node.nodeId, { GetInstalledPots: null });
    const answer = await until(async () => {
      const r = (await getJson(`${core.api}/api/v1/commands/${listed.body.command_id}`)).body;
      return r.status === "succeeded" && r;
    }, "the node's list of pots");
    expect(answer.data).toEqual({ pots: [] });
  });

  test("a good InstallPot passes the check and installs", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path);
    const res = await post(core, node.nodeId, install("web-01", "wordpress", { http_port: "18080", pot_id: "web-01" }));
    expect(res.status).toBe(202);
    await until(async () => (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots.some((p: { status: string }) => p.status === "Stopped"), "web-01 installed");
  });
});

test("a node registers the fingerprint of its default catalogue", async () => {
  await using core = await startTestCore();
  using dir = tempDir();
  await using builtin = await startAgent(core, join(dir.path, "a"));
  await using fixture = await startAgent(core, join(dir.path, "b"), FIXTURE_CATALOGUE);
  await using git = await startAgent(core, join(dir.path, "c"), "https://example.com/catalogue.git");
  expect(core.registry.catalogueOf(builtin.nodeId)).toBe(catalogueDigest(loadCatalogue(BUILTIN_CATALOGUE)));
  expect(core.registry.catalogueOf(fixture.nodeId)).toBe(catalogueDigest(loadCatalogue(FIXTURE_CATALOGUE)));
  expect(core.registry.catalogueOf(fixture.nodeId)).not.toBe(core.registry.catalogueOf(builtin.nodeId));
  expect(core.registry.catalogueOf(git.nodeId)).toBeNull();
});

describe("an InstallPot Core cannot check goes to the node as before", () => {
  test("a node with a catalogue of its own: the node refuses, and the Failed pot's record says how to remove it", async () => {
    await using core = await startTestCore();
    using dir = tempDir();
    await using node = await startAgent(core, dir.path, FIXTURE_CATALOGUE);
    const res = await post(core, node.nodeId, install("mail-01", "mailpot"));
    expect(res.status).toBe(202);
    const record = await until(async () => {
      const r = (await getJson(`${core.api}/api/v1/commands/${res.body.command_id}`)).body;
      return r.status === "failed" && r;
    }, "the node's refusal");
    expect(record.message).toStartWith('unknown honeypot kind "mailpot"; known kinds: testpot');
    expect(record.message).toEndWith(`mail-01 stays in Core's registry as Failed: remove it with "honeybee remove ${node.nodeId} mail-01" (RemovePot)`);
    expect((await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots).toEqual([{ node_id: node.nodeId, pot_id: "mail-01", pot_type: "mailpot", status: "Failed", message: 'unknown honeypot kind "mailpot"; known kinds: testpot (test-pot, fixture-pot)' }]);
  });

  test("a node that names no catalogue (the upstream Go node), and an install from a git_url", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    for (const command of [install("mail-01", "mailpot"), { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: "99999" }, auto_start: false, git_url: "https://example.com/catalogue.git" } }]) {
      const res = await post(core, BIG_ID, command);
      expect(res.status).toBe(202);
      expect((await node.nextKind("NodeCommand")).command).toEqual(command);
    }
  });
});
