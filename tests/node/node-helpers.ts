import { afterAll, beforeAll } from "bun:test";
import { join } from "node:path";
import { startNode, type NodeHandle } from "../../src/node/agent";
import type { NodeConfig } from "../../src/node/config";
import { silentLogger } from "../../src/log";
import { FakeCore, type FakeCoreOptions } from "../helpers/fake-core";
import { BUN, LineClient, ROOT, tempDir } from "../helpers";

export const FIXTURE_CATALOGUE = join(ROOT, "tests", "fixtures", "catalogue");

/** Fast intervals: tests wait on messages, and these bound how long a wait can be. */
export const FAST: Partial<NodeConfig> = {
  heartbeat_ms: 50,
  reconnect_min_ms: 10,
  reconnect_max_ms: 100,
  start_timeout_ms: 5000,
  stop_grace_ms: 2000,
  restart_min_ms: 20,
  restart_max_ms: 200,
  install_timeout_ms: 30_000,
};

export async function startTestNode(core: FakeCore, data: string, overrides: Partial<NodeConfig> = {}): Promise<NodeHandle & { [Symbol.asyncDispose](): Promise<void> }> {
  const node = await startNode({ core: core.core, events: core.eventsAddress, data, name: "test-node", relay_port: 0, catalogue: FIXTURE_CATALOGUE, log_level: "silent", ...FAST, ...overrides }, silentLogger());
  return Object.assign(node, { [Symbol.asyncDispose]: () => node.stop() });
}

export interface NodeTest {
  core: FakeCore;
  node: NodeHandle;
  data: string;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A fake Core, a data directory and a node registered with that Core; all gone on dispose. */
export async function nodeTest(overrides: Partial<NodeConfig> = {}, coreOptions: FakeCoreOptions = {}): Promise<NodeTest> {
  const core = FakeCore.start(coreOptions);
  const dir = tempDir();
  try {
    const node = await startTestNode(core, dir.path, overrides);
    await core.next("NodeRegistration");
    return {
      core,
      node,
      data: dir.path,
      [Symbol.asyncDispose]: async () => {
        await node.stop();
        core.stop();
        dir[Symbol.dispose]();
      },
    };
  } catch (e) {
    core.stop();
    dir[Symbol.dispose]();
    throw e;
  }
}

/** One nodeTest for a whole file: started before its tests, stopped after them. */
export function sharedNodeTest(overrides: Partial<NodeConfig> = {}): NodeTest {
  const shared = {} as NodeTest;
  beforeAll(async () => void Object.assign(shared, await nodeTest(overrides)));
  afterAll(() => shared[Symbol.asyncDispose]?.());
  return shared;
}

/** Talks to the fixture honeypot's control port. */
export async function potOrder(port: number, order: string): Promise<any> {
  const c = await LineClient.connect(port);
  try {
    c.sendRaw(order + "\n");
    return await c.next();
  } finally {
    c.close();
  }
}

/** Sends an order that gets no answer (the honeypot exits). */
export async function potTell(port: number, order: string): Promise<void> {
  const c = await LineClient.connect(port);
  c.sendRaw(order + "\n");
  await c.closed;
}

export interface CoreProcess {
  proc: Bun.Subprocess<"ignore", "pipe", "inherit">;
  api: string;
  ports: { node: number; event: number; api: number };
}

/** Core as its own process, so that it can be killed for real; resolves once it listens. */
export async function spawnCore(db: string, ports: { node: number; event: number } = { node: 0, event: 0 }): Promise<CoreProcess> {
  const args = ["core", "--db", db, "--node-port", String(ports.node), "--event-port", String(ports.event), "--api-port", "0", "--ws-port", "0", "--log-level", "info", "--log-events", "false"];
  const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), ...args], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const started = Promise.withResolvers<CoreProcess["ports"]>();
  // Keep reading to the end: a Core whose stdout is not read dies of EPIPE on its next log line.
  void (async () => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of proc.stdout) {
      if (!text.includes("core started")) text += decoder.decode(chunk);
      const line = text.split("\n").find((l) => l.includes('"core started"'));
      if (line) started.resolve(JSON.parse(line).ports);
    }
    started.reject(new Error(`Core did not start: ${text}`));
  })();
  const p = await started.promise;
  return { proc, api: `http://127.0.0.1:${p.api}`, ports: p };
}
