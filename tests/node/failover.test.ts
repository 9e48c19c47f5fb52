/**
 * A node given several Core instances: it registers with the first that answers, fails over to
 * the next when it loses it (clean stop, SIGKILL, refused), answers commands sent through the
 * new one, and its spooled events follow it there. The two Cores share nothing (each its own
 * SQLite file), so what each stored is read from its own file.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../../src/config";
import { createLogger, type LogLevel } from "../../src/log";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { corePeers, loadNodeConfig, type NodeConfig } from "../../src/node/config";
import { BUN, freePort, getJson, LineClient, ROOT, startTestCore, tempDir, until } from "../helpers";
import { makeCertificates } from "../helpers/tls";
import { FAST, spawnCore } from "./node-helpers";

interface Core {
  api: string;
  ports: { node: number; event: number };
}

const addresses = (cores: Core[]) => ({ core: cores.map((c) => `127.0.0.1:${c.ports.node}`).join(","), events: cores.map((c) => `127.0.0.1:${c.ports.event}`).join(",") });

/** A node agent on `cores`, with its log lines kept for the fail-over line. */
async function nodeOn(cores: Core[], data: string, overrides: Partial<NodeConfig> = {}, level: LogLevel = "info"): Promise<{ node: NodeHandle; log: string[] }> {
  const log: string[] = [];
  const logger = createLogger(level, { destination: { write: (line: string) => void log.push(line) } });
  const node = await startNode({ ...addresses(cores), data, name: "failover", relay_port: 0, ...FAST, ...overrides }, logger);
  return { node, log };
}

const knows = async (core: { api: string }, node: NodeHandle) => (await getJson(`${core.api}/api/v1/nodes/${node.nodeId}`)).status === 200;

/** Sends GetInstalledPots through `core`'s REST and returns the finished command record. */
async function command(core: Core, node: NodeHandle): Promise<any> {
  const sent = await getJson(`${core.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetInstalledPots: null }) });
  expect(sent.status).toBe(202);
  return until(async () => {
    const r = (await getJson(`${core.api}/api/v1/commands/${sent.body.command_id}`)).body;
    return (r.status === "succeeded" || r.status === "failed") && r;
  }, "the command's result");
}

/** Flat honeypot events numbered from..to-1, written to the node's relay as a honeypot does. */
async function produce(node: NodeHandle, from: number, to: number) {
  const pot = await LineClient.connect(node.ports.relay);
  const lines: string[] = [];
  for (let n = from; n < to; n++) lines.push(JSON.stringify({ eventid: "test.failover", pot_id: "gen", n, src_ip: "203.0.113.7", timestamp: "2026-01-01T00:00:00.000Z" }) + "\n");
  pot.sendRaw(lines.join(""));
  pot.close();
  await until(() => node.relay.counters.accepted >= to, `${to} events at the relay`);
}

/** The event numbers a Core's SQLite file holds. */
function stored(db: string): number[] {
  const sqlite = new Database(db, { readonly: true });
  try {
    const rows = sqlite.query("SELECT json_extract(e.data, '$.n') AS n FROM events e JOIN event_sources s ON s.id = e.source_id WHERE s.pot_id = 'gen'").all() as { n: number }[];
    return rows.map((r) => r.n);
  } finally {
    sqlite.close();
  }
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const failedOver = (log: string[], from: Core, to: Core) => until(() => log.some((l) => l.includes(`failed over from Core 127.0.0.1:${from.ports.node} to Core 127.0.0.1:${to.ports.node}`)), "the fail-over log line");

describe("a node with several Core addresses", () => {
  test("the first Core stops: the node registers with the second, answers a command sent through it, and logs the fail-over once", async () => {
    using dir = tempDir();
    const a = await startTestCore({ db: join(dir.path, "a.db") });
    await using b = await startTestCore({ db: join(dir.path, "b.db") });
    const { node, log } = await nodeOn([a, b], join(dir.path, "node"));
    try {
      await node.registered();
      expect({ a: await knows(a, node), b: await knows(b, node) }).toEqual({ a: true, b: false });
      expect(await command(a, node)).toMatchObject({ command: "GetInstalledPots", status: "succeeded" });

      await a.stop();
      await until(() => knows(b, node), "the node registered with the second Core");
      expect(await command(b, node)).toMatchObject({ command: "GetInstalledPots", status: "succeeded", data: { pots: [] } });
      await failedOver(log, a, b);
      expect(log.filter((l) => l.includes("failed over from")).length).toBe(1);
    } finally {
      await node.stop();
      await a.stop();
    }
  });

  test("events written while the first Core goes away are all stored, those it did not acknowledge by the second", async () => {
    using dir = tempDir();
    const dbA = join(dir.path, "a.db");
    const dbB = join(dir.path, "b.db");
    const a = await startTestCore({ db: dbA });
    await using b = await startTestCore({ db: dbB });
    const { node } = await nodeOn([a, b], join(dir.path, "node"), { forward_window: 500 });
    try {
      await node.registered();
      await produce(node, 0, 3000);
      await node.forwarder.acknowledged(1);
      await a.stop();
      await produce(node, 3000, 6000);
      await until(() => knows(b, node), "the node registered with the second Core");
      await node.forwarder.drained();

      const onA = stored(dbA);
      const onB = stored(dbB);
      expect(onA.length).toBeGreaterThan(0);
      expect(new Set(onB).size).toBe(onB.length);
      // Everything A did not store went to B; at least once, so B may repeat what A committed but never acknowledged.
      expect([...new Set([...onA, ...onB])].sort((x, y) => x - y)).toEqual(range(6000));
      expect(onB).toEqual(expect.arrayContaining(range(6000).filter((n) => !onA.includes(n))));
      expect(node.spool.pending).toBe(0);
    } finally {
      await node.stop();
      await a.stop();
    }
  });

  test("between a lost Core and the next registration events wait in the spool, even with another event socket alive", async () => {
    using dir = tempDir();
    const dbA = join(dir.path, "a.db");
    const dbC = join(dir.path, "c.db");
    const dbD = join(dir.path, "d.db");
    const a = await startTestCore({ db: dbA });
    await using d = await startTestCore({ db: dbD });
    // Second entry: its control channel refuses but its event socket (Core D's) answers.
    // Third: Core C, started only once the node has tried all three in vain.
    const half: Core = { api: "", ports: { node: freePort(), event: d.ports.event } };
    const later: Core = { api: "", ports: { node: freePort(), event: freePort() } };
    const { node, log } = await nodeOn([a, half, later], join(dir.path, "node"), {}, "debug");
    try {
      await node.registered();
      await produce(node, 0, 100);
      await node.forwarder.drained();
      await a.stop();
      await produce(node, 100, 2000);
      await until(() => log.some((l) => l.includes('"component":"control"') && l.includes("reconnecting later")), "a full round of failed addresses");
      await using c = await startTestCore({ db: dbC, node_port: later.ports.node, event_port: later.ports.event });
      await until(() => knows(c, node), "the node registered with the third Core");
      await node.forwarder.drained();
      await failedOver(log, a, c);
      const onA = stored(dbA);
      const onC = stored(dbC);
      expect({ d: stored(dbD).length, all: [...new Set([...onA, ...onC])].sort((x, y) => x - y) }).toEqual({ d: 0, all: range(2000) });
    } finally {
      await node.stop();
      await a.stop();
    }
  });

  test("the first address refuses from the start: the node registers with the second and sends its events there", async () => {
    using dir = tempDir();
    const dbB = join(dir.path, "b.db");
    await using b = await startTestCore({ db: dbB });
    const nobody: Core = { api: "", ports: { node: freePort(), event: freePort() } };
    const { node, log } = await nodeOn([nobody, b], join(dir.path, "node"));
    try {
      await node.registered();
      expect(await knows(b, node)).toBe(true);
      await produce(node, 0, 100);
      await node.forwarder.drained();
      expect(stored(dbB).sort((x, y) => x - y)).toEqual(range(100));
      // Never registered with the first, so this is a start, not a fail-over.
      expect(log.filter((l) => l.includes("failed over from"))).toEqual([]);
    } finally {
      await node.stop();
    }
  });

  test("the first Core's certificate is not trusted (TLS handshake fails): the node registers with the second", async () => {
    using dir = tempDir();
    using strange = tempDir();
    const trusted = makeCertificates(dir.path);
    const untrusted = makeCertificates(strange.path);
    await using a = await startTestCore({ db: join(dir.path, "a.db"), tls_cert: untrusted.cert, tls_key: untrusted.key });
    await using b = await startTestCore({ db: join(dir.path, "b.db"), tls_cert: trusted.cert, tls_key: trusted.key });
    const { node } = await nodeOn([a, b], join(dir.path, "node"), { tls_ca: trusted.ca });
    try {
      await node.registered();
      const https = (core: { ports: { api: number } }, ca: string) => getJson(`https://127.0.0.1:${core.ports.api}/api/v1/nodes/${node.nodeId}`, { tls: { ca: readFileSync(ca, "utf8") } } as RequestInit);
      expect({ a: (await https(a, untrusted.ca)).status, b: (await https(b, trusted.ca)).status }).toEqual({ a: 404, b: 200 });
    } finally {
      await node.stop();
    }
  });

  test("Core killed with SIGKILL: the node fails over, its unacknowledged events and a new command follow it", async () => {
    using dir = tempDir();
    const dbA = join(dir.path, "a.db");
    const dbB = join(dir.path, "b.db");
    const a = await spawnCore(dbA);
    await using b = await startTestCore({ db: dbB });
    const { node, log } = await nodeOn([a, b], join(dir.path, "node"), { forward_window: 500 });
    try {
      await node.registered();
      expect(await knows(a, node)).toBe(true);
      await produce(node, 0, 3000);
      await node.forwarder.acknowledged(1);
      a.proc.kill("SIGKILL");
      await a.proc.exited;
      await produce(node, 3000, 4000);
      await until(() => knows(b, node), "the node registered with the second Core");
      expect(await command(b, node)).toMatchObject({ command: "GetInstalledPots", status: "succeeded" });
      await node.forwarder.drained();
      await failedOver(log, a, b);

      const onA = stored(dbA);
      const onB = stored(dbB);
      expect([...new Set([...onA, ...onB])].sort((x, y) => x - y)).toEqual(range(4000));
      expect(new Set(onB).size).toBe(onB.length);
    } finally {
      await node.stop();
      a.proc.kill("SIGKILL");
    }
  });
});

describe("several Core addresses in the configuration", () => {
  test("a list pairs each Core with its event socket, by position or on 9100", () => {
    expect(corePeers(loadNodeConfig({ core: "a.example:9001, b.example:9001,[::1]:9001" }, {}))).toEqual([
      { control: { host: "a.example", port: 9001 }, events: { host: "a.example", port: 9100 } },
      { control: { host: "b.example", port: 9001 }, events: { host: "b.example", port: 9100 } },
      { control: { host: "::1", port: 9001 }, events: { host: "::1", port: 9100 } },
    ]);
    expect(corePeers(loadNodeConfig({ core: "a:1,b:2", events: "a:3,b:4" }, {}))).toEqual([
      { control: { host: "a", port: 1 }, events: { host: "a", port: 3 } },
      { control: { host: "b", port: 2 }, events: { host: "b", port: 4 } },
    ]);
  });

  test("an empty or malformed item, or events that do not pair up, is a config error naming the item", () => {
    const error = (flags: Record<string, string>) => {
      try {
        loadNodeConfig(flags, {});
      } catch (e) {
        return { config: e instanceof ConfigError, message: (e as Error).message };
      }
      return null;
    };
    const hint = "expected HOST:PORT or a comma-separated list of them, e.g. 10.0.0.1:9001,10.0.0.2:9001";
    expect(error({ core: "a:9001,,b:9001" })).toEqual({ config: true, message: `invalid value for "core": item 2 of "a:9001,,b:9001" is empty (${hint})` });
    expect(error({ core: "a:9001," })).toEqual({ config: true, message: `invalid value for "core": item 2 of "a:9001," is empty (${hint})` });
    expect(error({ core: "a:9001,b" })).toEqual({ config: true, message: `invalid value for "core": item 2 of "a:9001,b", "b", is not HOST:PORT (${hint})` });
    expect(error({ core: "a:9001,b:9001", events: "a:9100,b:70000" })).toEqual({ config: true, message: `invalid value for "events": item 2 of "a:9100,b:70000", "b:70000", is not HOST:PORT (${hint})` });
    expect(error({ core: "a:9001,b:9001", events: "a:9100" })?.message).toStartWith('invalid value for "events": 1 address(es) for 2 in "core"');
  });

  test("honeybee node --core with a bad item stops at once with the item named", async () => {
    const p = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "node", "--core", "127.0.0.1:9001,,127.0.0.1:9002", "--log-level", "silent"], { stdout: "pipe", stderr: "pipe" });
    expect(await p.exited).toBe(1);
    expect(await new Response(p.stderr).text()).toContain('invalid value for "core": item 2 of "127.0.0.1:9001,,127.0.0.1:9002" is empty');
  });
});
