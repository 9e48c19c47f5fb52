/**
 * No event lost on the way from a honeypot to Core's database: what a pot wrote to its own JSON
 * log, and the real samples of Cowrie and HonnyPotter's forwarder, arrive in Core through a
 * real node relay, every line of them (issue: `cowrie.client.version` has `version` and
 * `message` fields and was taken for a Protocol v2 envelope and dropped).
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { freePort, getJson, LineClient, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { FAST } from "./node-helpers";

const SAMPLES = join(import.meta.dir, "..", "ingest", "samples");
const sampleLines = (name: string) => readFileSync(join(SAMPLES, name), "utf8").split("\n").filter(Boolean);

/** Count of each value, for comparing what was sent with what was stored. */
function tally(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

async function storedEvents(core: TestCore, potId: string): Promise<any[]> {
  const r = await getJson(`${core.api}/api/v1/events?pot_id=${potId}&limit=1000`);
  expect(r.status).toBe(200);
  return r.body.events;
}

async function withCoreAndNode(dir: string, body: (core: TestCore, node: NodeHandle) => Promise<void>) {
  await using core = await startTestCore({ db: join(dir, "core.db") });
  const node = await startNode({ core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: join(dir, "node"), name: "lab", relay_port: 0, log_level: "silent", ...FAST }, silentLogger());
  try {
    await node.registered();
    await body(core, node);
  } finally {
    await node.stop();
  }
}

/** Resolves once the relay has taken (accepted or refused) `lines` lines and Core has acknowledged all it accepted. */
async function relayed(node: NodeHandle, lines: number) {
  await until(() => node.relay.counters.accepted + node.relay.counters.rejected >= lines, `${lines} lines at the relay`);
  await node.forwarder.drained();
}

/** OpenSSH with the password given through SSH_ASKPASS (no sshpass needed). */
async function ssh(dir: string, port: number, password: string, command: string): Promise<{ code: number; out: string }> {
  const askpass = join(dir, `askpass-${password}`);
  writeFileSync(askpass, `#!/bin/sh\necho '${password}'\n`);
  chmodSync(askpass, 0o755);
  const opts = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR", "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password", "-o", "NumberOfPasswordPrompts=1"];
  const p = Bun.spawn(["ssh", ...opts, "-p", String(port), "root@127.0.0.1", command], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: "force", DISPLAY: ":0" },
  });
  const out = await new Response(p.stdout).text();
  return { code: await p.exited, out };
}

describe("every event reaches Core through the node's relay", () => {
  test("the built-in cowrie attacked by OpenSSH: every line of its own JSON log is stored, by event id", async () => {
    using dir = tempDir();
    await withCoreAndNode(dir.path, async (core, node) => {
      const sshPort = freePort();
      const install = { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(sshPort), telnet_port: String(freePort()) }, auto_start: true } };
      const sent = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(install) });
      expect(sent.status).toBe(202);
      await node.supervisor.reached("ssh-01", "Running");

      expect((await ssh(dir.path, sshPort, "not-the-password", "id")).code).toBe(255);
      const shell = await ssh(dir.path, sshPort, "123456", "uname -a; whoami");
      expect({ code: shell.code, root: shell.out.includes("root") }).toEqual({ code: 0, root: true });

      // The pot's own record: its JSON log, written before anything is sent to the relay.
      const file = join(node.dataDir, "pots", "ssh-01", "log", "cowrie.json");
      const lines = (await until((): string[] | false => {
        const all = readFileSync(file, "utf8").split("\n").filter(Boolean);
        return all.filter((l) => l.includes('"cowrie.session.closed"')).length === 2 && all;
      }, "both sessions closed in the pot's log")) as string[];
      await relayed(node, lines.length);

      const written = lines.map((l) => JSON.parse(l));
      const stored = await storedEvents(core, "ssh-01");
      expect(written.map((e) => e.eventid)).toContain("cowrie.client.version");
      expect(tally(stored.map((e) => e.event_type))).toEqual(tally(written.map((e) => e.eventid)));
      // Line for line: the same event at the same time with the same data.
      const key = (type: string, session: string, timestamp: string) => `${type} ${session} ${timestamp}`;
      expect(stored.map((e) => key(e.event_type, e.data.session, e.timestamp)).sort()).toEqual(written.map((e) => key(e.eventid, e.session, new Date(e.timestamp).toISOString())).sort());
      const version = stored.find((e) => e.event_type === "cowrie.client.version");
      expect(version).toMatchObject({ pot_id: "ssh-01", pot_type: "cowrie", node_id: node.nodeId, src_ip: "127.0.0.1", data: { version: expect.stringMatching(/^SSH-2\.0-OpenSSH_/), message: expect.stringMatching(/^Remote SSH version: SSH-2\.0-OpenSSH_/) } });
      expect(node.relay.counters.rejected).toBe(0);
    });
  });

  test("the real samples of Cowrie 2.9 and HonnyPotter's forwarder: every line stored, by event id", async () => {
    using dir = tempDir();
    await withCoreAndNode(dir.path, async (core, node) => {
      const cowrie = sampleLines("cowrie-2.9-honeybee-output.jsonl");
      const honnypotter = sampleLines("honnypotter-forwarder-output.jsonl");
      // As the honeypots send them: one connection each, the lines as they are, no hello.
      for (const lines of [cowrie, honnypotter]) {
        const pot = await LineClient.connect(node.ports.relay);
        pot.sendRaw(lines.map((l) => l + "\n").join(""));
        pot.close();
      }
      await relayed(node, cowrie.length + honnypotter.length);

      expect(node.relay.counters).toMatchObject({ accepted: cowrie.length + honnypotter.length, rejected: 0 });
      const eventIds = (lines: string[]) => tally(lines.map((l) => JSON.parse(l).eventid));
      expect(tally((await storedEvents(core, "cowrie-lab")).map((e) => e.event_type))).toEqual(eventIds(cowrie));
      expect(tally((await storedEvents(core, "honnypotter-01")).map((e) => e.event_type))).toEqual(eventIds(honnypotter));
      expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ rejected: 0, pending: 0 });
    });
  });
});
