import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket } from "bun";
import { startCore, type CoreHandle } from "../../src/core";
import type { CoreConfig } from "../../src/config";
import { silentLogger } from "../../src/log";
import { parseWithIds, stringify } from "../../src/protocol/json";
import { onCluster, onPostgres, testDatabase } from "./postgres";

export const ROOT = join(import.meta.dir, "..", "..");
export const BUN = process.execPath;

export function tempDir(prefix = "honeybee-test-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

export type TestCore = CoreHandle & { api: string; ws: string; [Symbol.asyncDispose](): Promise<void> };

/** Starts a real Core on port 0 everywhere, with a throwaway database unless one is given. */
export async function startTestCore(overrides: Partial<CoreConfig> = {}, logger = silentLogger()): Promise<TestCore> {
  // The PostgreSQL switch (tests/helpers/postgres.ts): a database of its own unless one is given.
  const pg = onPostgres() && overrides.db === undefined ? await testDatabase() : null;
  // HONEYBEE_TEST_DB=cluster: the same Core with all its roles, its events through JetStream.
  const shared = pg && onCluster() && overrides.bus === undefined ? await import("../cluster/helpers") : null;
  const cluster = shared ? { bus: shared.NATS_URL, cluster: shared.clusterName() } : {};
  let core: CoreHandle;
  try {
    core = await startCore({ host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, db: pg?.url ?? ":memory:", log_events: false, api_rate_per_minute: 0, ws_commands_per_minute: 0, ...cluster, ...overrides }, logger);
  } catch (e) {
    await pg?.drop();
    throw e;
  }
  if (pg) {
    const stop = core.stop;
    let stopped: Promise<void> | null = null;
    const bus = core.cluster?.bus;
    const dropStream = async () => {
      if (shared && "cluster" in cluster && bus) await shared.dropCluster(cluster.cluster as string, cluster.bus).catch(() => {});
    };
    core = Object.assign(core, { stop: () => (stopped ??= stop().finally(() => Promise.all([pg.drop(), dropStream()]))) });
  }
  return Object.assign(core, {
    api: `http://127.0.0.1:${core.ports.api}`,
    ws: `ws://127.0.0.1:${core.ports.ws}`,
    [Symbol.asyncDispose]: () => core.stop(),
  });
}

/**
 * Waits until what Core acknowledged is also readable. Alone, an EventAck follows the commit;
 * in a cluster (HONEYBEE_TEST_DB=cluster) it follows JetStream's, and a writer commits after.
 */
export async function settled(core: { api: string; cluster?: unknown }, token?: string): Promise<void> {
  if (!core.cluster) return;
  let last = "";
  await until(async () => {
    const r = await getJson(`${core.api}/api/v1/stats`, token ? { headers: { authorization: `Bearer ${token}` } } : undefined);
    last = r.text;
    return r.body && r.body.total_events >= r.body.ingest.committed;
  }, "the writers to store what was acknowledged").catch((e) => {
    throw new Error(`${(e as Error).message}; stats: ${last.slice(0, 300)}`);
  });
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: any = null;
  try {
    body = parseWithIds(text);
  } catch {}
  return { status: res.status, body, text, headers: res.headers };
}

/**
 * A line-oriented TCP client: what a node (or a honeypot) does on the wire. `next()` waits for
 * the next line that matches, without sleeping.
 */
export class LineClient {
  private buffer = "";
  private lines: string[] = [];
  private waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  private closedResolvers = Promise.withResolvers<void>();
  socket!: Socket<undefined>;

  static async connect(port: number, host = "127.0.0.1"): Promise<LineClient> {
    const c = new LineClient();
    c.socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        data: (_s, chunk) => c.onData(chunk.toString()),
        close: () => c.closedResolvers.resolve(),
        error: () => c.closedResolvers.resolve(),
      },
    });
    return c;
  }

  private onData(text: string) {
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      const i = this.waiters.findIndex((w) => w.match(line));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(line);
      else this.lines.push(line);
    }
  }

  get closed(): Promise<void> {
    return this.closedResolvers.promise;
  }

  /** Sends raw text as is. */
  sendRaw(text: string | Uint8Array): void {
    this.socket.write(text);
  }

  /** Sends a Protocol v2 message with an exact u64 node_id. */
  send(kind: string, payload: unknown): void {
    this.socket.write(stringify({ version: 2, message: payload === null ? kind : { [kind]: payload } }) + "\n");
  }

  /** Waits for the next line that matches (default: any), parsed with exact ids. */
  async next(match: (msg: any) => boolean = () => true): Promise<any> {
    const test = (line: string) => {
      try {
        return match(parseWithIds(line));
      } catch {
        return false;
      }
    };
    const i = this.lines.findIndex(test);
    if (i >= 0) return parseWithIds(this.lines.splice(i, 1)[0]!);
    const { promise, resolve } = Promise.withResolvers<string>();
    this.waiters.push({ match: test, resolve });
    return parseWithIds(await promise);
  }

  /** Waits for a message of one kind (`message.<Kind>`). */
  async nextKind(kind: string): Promise<any> {
    const m = await this.next((m) => m?.message?.[kind] !== undefined || m?.message === kind);
    return m.message[kind] ?? null;
  }

  close(): void {
    this.socket.end();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

export const BIG_ID = 18446744073709551557n;

/** Registers a fake node over TCP and waits for its RegistrationAck. */
export async function registerNode(core: { ports: { node: number } }, nodeId = BIG_ID, name = "sensor-1"): Promise<LineClient> {
  const node = await LineClient.connect(core.ports.node);
  node.send("NodeRegistration", { node_id: nodeId, node_name: name, address: "127.0.0.1", port: 0, node_type: "Full" });
  const ack = await node.nextKind("RegistrationAck");
  if (!ack.accepted) throw new Error(`registration refused: ${ack.message}`);
  return node;
}

/** Waits until `check` returns a truthy value, polling a bus-free condition (REST) on each tick. */
export async function until<T>(check: () => Promise<T> | T, what = "condition", tries = 500): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const v = await check();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A WebSocket client that queues frames and waits for the next matching one. */
export class WsClient {
  private frames: any[] = [];
  private waiters: { match: (m: any) => boolean; resolve: (m: any) => void }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly ws: WebSocket;

  private constructor(url: string, protocols?: string | string[], headers?: Record<string, string>) {
    this.ws = new WebSocket(url, headers ? ({ headers, protocols } as any) : protocols);
    const closed = Promise.withResolvers<{ code: number; reason: string }>();
    this.closed = closed.promise;
    this.ws.onclose = (e) => closed.resolve({ code: e.code, reason: e.reason });
    this.ws.onmessage = (e) => {
      const m = typeof e.data === "string" ? parseWithIds(e.data) : e.data;
      const i = this.waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(m);
      else this.frames.push(m);
    };
  }

  static async connect(url: string, opts: { protocols?: string | string[]; headers?: Record<string, string> } = {}): Promise<WsClient> {
    const c = new WsClient(url, opts.protocols, opts.headers);
    await new Promise<void>((resolve, reject) => {
      c.ws.onopen = () => resolve();
      c.ws.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
    return c;
  }

  send(value: unknown): void {
    this.ws.send(typeof value === "string" || value instanceof Uint8Array ? (value as any) : stringify(value));
  }

  next(match: (m: any) => boolean = () => true): Promise<any> {
    const i = this.frames.findIndex(match);
    if (i >= 0) return Promise.resolve(this.frames.splice(i, 1)[0]);
    const { promise, resolve } = Promise.withResolvers<any>();
    this.waiters.push({ match, resolve });
    return promise;
  }

  /** Waits for the next message of a kind and returns its payload. */
  async nextKind(kind: string, match: (payload: any) => boolean = () => true): Promise<any> {
    const m = await this.next((m) => m?.message?.[kind] !== undefined && match(m.message[kind]));
    return m.message[kind];
  }

  /** Frames received and not yet taken. */
  get pending(): any[] {
    return this.frames;
  }

  close(): void {
    this.ws.close();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/**
 * A port that was free a moment ago, for configs that must name a port before anything listens
 * on it (a honeypot's `*_port` key cannot be 0: the node checks it is 1-65535).
 */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

/**
 * A client of Core's event socket, as a node's forwarder or a honeypot uses it: an optional
 * EventStreamHello, lines queued and written as the socket takes them (partial writes and
 * `drain` honoured), EventAck lines collected.
 */
export class EventStreamClient {
  private queue: Buffer[] = [];
  private flushed = Promise.withResolvers<void>();
  private ackWaiters: { seq: number; resolve: () => void }[] = [];
  private text = "";
  /** Highest EventAck seq received. */
  acked = 0;
  /** Bytes Core wrote back on this connection. */
  bytesReceived = 0;
  socket!: Socket<undefined>;

  static async connect(port: number, hello?: { node_id?: bigint; acks?: boolean }): Promise<EventStreamClient> {
    const c = new EventStreamClient();
    c.flushed.resolve();
    c.socket = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_s, chunk) => c.onData(chunk),
        drain: () => c.pump(),
      },
    });
    if (hello) c.send(stringify({ version: 2, message: { EventStreamHello: hello } }));
    return c;
  }

  private onData(chunk: Buffer) {
    this.bytesReceived += chunk.length;
    this.text += chunk.toString();
    let nl: number;
    while ((nl = this.text.indexOf("\n")) >= 0) {
      const line = this.text.slice(0, nl);
      this.text = this.text.slice(nl + 1);
      const seq = (parseWithIds(line) as any)?.message?.EventAck?.seq;
      if (typeof seq === "number" && seq > this.acked) this.acked = seq;
    }
    this.ackWaiters = this.ackWaiters.filter((w) => (w.seq <= this.acked ? (w.resolve(), false) : true));
  }

  /** Queues lines (a newline is added to each) or raw text/bytes as they are. */
  send(lines: string | string[] | Uint8Array): void {
    const data = lines instanceof Uint8Array ? Buffer.from(lines) : Buffer.from(Array.isArray(lines) ? lines.map((l) => l + "\n").join("") : lines + "\n");
    if (this.queue.length === 0) this.flushed = Promise.withResolvers<void>();
    this.queue.push(data);
    this.pump();
  }

  private pump() {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = this.socket.write(head);
      if (n < head.length) {
        this.queue[0] = head.subarray(Math.max(n, 0));
        return;
      }
      this.queue.shift();
    }
    this.flushed.resolve();
  }

  /** True while written data waits for the socket (the peer stopped reading). */
  get blocked(): boolean {
    return this.queue.length > 0;
  }

  /** Resolves once the kernel has taken everything sent. */
  written(): Promise<void> {
    return this.flushed.promise;
  }

  /** Resolves once Core has acknowledged `seq` lines. */
  ack(seq: number): Promise<void> {
    if (this.acked >= seq) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.ackWaiters.push({ seq, resolve });
    return promise;
  }

  close(): void {
    this.socket.end();
  }

  [Symbol.dispose]() {
    this.close();
  }
}

/** Waits until Core has committed at least `n` events (its stats' `total_events`). */
export async function waitForEvents(core: { api: string }, n: number): Promise<any> {
  return until(async () => {
    const s = await getJson(`${core.api}/api/v1/stats`);
    return s.body?.total_events >= n ? s.body : null;
  }, `${n} committed events`);
}
