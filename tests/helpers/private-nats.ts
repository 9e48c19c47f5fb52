/**
 * Private NATS servers with JetStream for the tests that stop or kill one: the machine's shared
 * server is never touched. One server, or a cluster of three (routes on loopback, a server name
 * each, one cluster name) whose JetStream holds streams with three replicas.
 *
 *   await using nats = await startPrivateNats();              // or { cluster: 3 }
 *   nats.urls                    ["nats://127.0.0.1:PORT", ...], one per server
 *   nats.servers[1].kill()       SIGKILL; .stop() SIGTERM; .start() again, same port and store
 *   await nats.destroy()         every server stopped, the folder removed
 *
 * Ready means what a client needs: connected, JetStream answering (account info), and for a
 * cluster a stream with three replicas created, so the meta leader is elected and every
 * server counted as a peer.
 */
import type { Subprocess } from "bun";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { requireTool } from "./clients";

/** How long a server (or the cluster) may take to be ready before the helper gives up. */
const READY_MS = 30_000;

export type PrivateNatsServer = {
  /** nats://127.0.0.1:PORT */
  url: string;
  /** Its --server_name. */
  name: string;
  /** SIGTERM, waits for the process to exit; the store stays. */
  stop(): Promise<void>;
  /** Starts it again on the same ports and store; resolves once its JetStream answers. */
  start(): Promise<void>;
  /** SIGKILL, waits for the process to exit. */
  kill(): Promise<void>;
  running(): boolean;
  logTail(lines?: number): string;
};

export type PrivateNats = {
  urls: string[];
  servers: PrivateNatsServer[];
  /** The --cluster_name (also unique, so usable as a prefix). */
  name: string;
  /** The temporary folder: a store and a log per server. */
  dir: string;
  destroy(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
};

/** Servers still running when the test process exits are killed and their folders removed. */
const live = new Set<{ procs(): Subprocess[]; dir: string }>();
process.once("exit", () => {
  for (const s of live) {
    for (const p of s.procs()) p.kill("SIGKILL");
    rmSync(s.dir, { recursive: true, force: true });
  }
});

let made = 0;

/** n distinct free ports: every probe stays bound until all are taken, so none comes back twice. */
function freePorts(n: number): number[] {
  const probes = Array.from({ length: n }, () => Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }));
  for (const p of probes) p.stop(true);
  return probes.map((p) => p.port);
}

/** Retries `attempt` until it resolves, at most `ms`; the error says what was awaited, the last failure and the logs. */
async function retry<T>(what: string, ms: number, attempt: () => Promise<T>, context: () => string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return await attempt();
    } catch (e) {
      const fatal = (e as { fatal?: boolean }).fatal === true;
      if (fatal || Date.now() > deadline) throw new Error(`private NATS: ${what}${fatal ? "" : ` within ${ms / 1000} s`} (${(e as Error)?.message ?? e}):\n${context()}`);
      await Bun.sleep(100);
    }
  }
}

export async function startPrivateNats(options: { cluster?: 1 | 3 } = {}): Promise<PrivateNats> {
  const bin = requireTool("nats-server");
  const size = options.cluster ?? 1;
  const dir = mkdtempSync(join(tmpdir(), "honeybee-nats-"));
  const name = `hbtest_${process.pid}_${++made}_${Date.now().toString(36)}`;
  const ports = freePorts(size * 2);
  const specs = Array.from({ length: size }, (_, i) => ({ name: `${name}_n${i + 1}`, port: ports[2 * i]!, routePort: size > 1 ? ports[2 * i + 1]! : 0 }));
  const procs = new Map<string, Subprocess>();
  const entry = { dir, procs: () => [...procs.values()] };
  live.add(entry);

  const servers: PrivateNatsServer[] = specs.map((spec) => {
    const url = `nats://127.0.0.1:${spec.port}`;
    const store = join(dir, spec.name);
    const log = join(dir, `${spec.name}.log`);
    mkdirSync(store);
    const argv = [bin, "-js", "-sd", store, "-a", "127.0.0.1", "-p", String(spec.port), "--server_name", spec.name];
    if (size > 1) {
      const routes = specs.filter((s) => s !== spec).map((s) => `nats://127.0.0.1:${s.routePort}`);
      argv.push("--cluster", `nats://127.0.0.1:${spec.routePort}`, "--cluster_name", name, "--routes", routes.join(","));
    }
    const logTail = (lines = 30) => (existsSync(log) ? `--- ${spec.name} log ---\n${readFileSync(log, "utf8").trimEnd().split("\n").slice(-lines).join("\n")}` : `(no log of ${spec.name})`);
    const running = () => {
      const p = procs.get(spec.name);
      return p !== undefined && p.exitCode === null && p.signalCode === null;
    };

    async function ready(): Promise<void> {
      await retry(
        `${spec.name} at ${url} did not become ready`,
        READY_MS,
        async () => {
          if (!running()) throw Object.assign(new Error(`nats-server exited (${procs.get(spec.name)?.exitCode ?? procs.get(spec.name)?.signalCode})`), { fatal: true });
          const nc = await connect({ servers: url, reconnect: false, timeout: 2000 });
          try {
            await (await jetstreamManager(nc, { timeout: 2000 })).getAccountInfo();
          } finally {
            await nc.close();
          }
        },
        () => logTail(),
      );
    }

    async function start(): Promise<void> {
      if (running()) throw new Error(`private NATS: ${spec.name} is already running`);
      // Its output appended to one log per server, kept across restarts for the error messages.
      const fd = openSync(log, "a");
      try {
        procs.set(spec.name, Bun.spawn(argv, { cwd: dir, stdin: "ignore", stdout: fd, stderr: fd }));
      } finally {
        closeSync(fd);
      }
      await ready();
    }

    async function end(sig: "SIGTERM" | "SIGKILL"): Promise<void> {
      const p = procs.get(spec.name);
      if (!p || !running()) throw new Error(`private NATS: ${spec.name} is not running`);
      p.kill(sig);
      await p.exited;
    }

    return { url, name: spec.name, start, stop: () => end("SIGTERM"), kill: () => end("SIGKILL"), running, logTail };
  });

  async function destroy(): Promise<void> {
    for (const p of procs.values()) if (p.exitCode === null && p.signalCode === null) p.kill("SIGTERM");
    await Promise.all([...procs.values()].map((p) => p.exited));
    live.delete(entry);
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    // Together: in a cluster each waits for the others' routes before its JetStream answers.
    await Promise.all(servers.map((s) => s.start()));
    if (size > 1) await clusterReady(servers, name);
  } catch (e) {
    await destroy();
    throw e;
  }
  return { urls: servers.map((s) => s.url), servers, name, dir, destroy, [Symbol.asyncDispose]: destroy };
}

/** Until a stream with a replica on every server can be created (then it is deleted). */
async function clusterReady(servers: PrivateNatsServer[], name: string): Promise<void> {
  const nc = await connect({ servers: servers.map((s) => s.url), timeout: 2000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 5000 });
    const probe = `${name}_ready`;
    await retry(
      `the ${servers.length} servers did not form a JetStream cluster (no stream with ${servers.length} replicas could be created)`,
      READY_MS,
      async () => {
        await jsm.streams.add({ name: probe, subjects: [`${probe}.>`], num_replicas: servers.length });
        await jsm.streams.delete(probe);
      },
      () => servers.map((s) => s.logTail(15)).join("\n"),
    );
  } finally {
    await nc.close();
  }
}
