import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Socket, Subprocess, TCPSocketListener } from "bun";

const SRC = join(import.meta.dir, "..", "..", "src", "honeypots");

/** A node id above 2^53: it must reach the relay digit for digit. */
export const NODE_ID = "18446744073709551557";

type Waiter<T> = { match: (item: T) => boolean; resolve: (item: T) => void };

/** Items that arrive over time, and a way to wait for one without sleeping. */
class Arrivals<T> {
  readonly items: T[] = [];
  private waiters: Waiter<T>[] = [];

  push(item: T): void {
    this.items.push(item);
    this.waiters = this.waiters.filter((w) => {
      if (!w.match(item)) return true;
      w.resolve(item);
      return false;
    });
  }

  next(match: (item: T) => boolean): Promise<T> {
    const found = this.items.find(match);
    if (found !== undefined) return Promise.resolve(found);
    const { promise, resolve } = Promise.withResolvers<T>();
    this.waiters.push({ match, resolve });
    return promise;
  }
}

/** The node's NDJSON event relay, as a honeypot sees it: accepts lines, writes nothing back. */
export class Relay {
  readonly lines: string[] = [];
  private readonly events = new Arrivals<any>();
  private readonly connections = new Arrivals<number>();
  private buffer = "";

  private constructor(readonly listener: TCPSocketListener<undefined>) {}

  static start(port = 0): Relay {
    let relay: Relay | undefined;
    const listener = Bun.listen<undefined>({
      hostname: "127.0.0.1",
      port,
      socket: {
        open: () => relay!.connections.push(relay!.connections.items.length + 1),
        data: (_s, chunk) => relay!.receive(chunk.toString()),
      },
    });
    relay = new Relay(listener);
    return relay;
  }

  get port(): number {
    return this.listener.port;
  }

  private receive(text: string): void {
    this.buffer += text;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      this.lines.push(line);
      this.events.push(JSON.parse(line));
    }
  }

  /** Resolves once a honeypot has connected (the first time, by default). */
  connected(count = 1): Promise<number> {
    return this.connections.next((n) => n >= count);
  }

  get all(): any[] {
    return this.events.items;
  }

  next(match: (event: any) => boolean): Promise<any> {
    return this.events.next(match);
  }

  /** The first event with this id and these field values. */
  event(eventid: string, fields: Record<string, unknown> = {}): Promise<any> {
    return this.next((e) => e.eventid === eventid && Object.entries(fields).every(([k, v]) => e[k] === v));
  }

  session(id: string): any[] {
    return this.all.filter((e) => e.session === id);
  }

  stop(): void {
    this.listener.stop(true);
  }
}

/** The listeners each kind names in its ready line. */
const PORT_NAMES = {
  cowrie: ["ssh", "telnet"],
  honnypotter: ["http"],
  redis: ["redis"],
  mysql: ["mysql"],
  adb: ["adb"],
  docker: ["docker"],
  web: ["http", "https"],
  // One listener per port, named by it ("tcp-8000"); the test reads them as it needs.
  tcp: [] as string[],
} as const;
type Kind = keyof typeof PORT_NAMES;

export interface Pot<K extends Kind> {
  dir: string;
  ports: Record<(typeof PORT_NAMES)[K][number], number>;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Events as written to `<log_path>/<kind>.json`. */
  fileLines(): string[];
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/** Starts `src/honeypots/<kind>/main.ts` the way the node does: cwd = pot dir, config file + env. */
export async function startPot<K extends Kind>(kind: K, config: Record<string, string>, relay: Relay | null, dir?: string): Promise<Pot<K>> {
  const potDir = dir ?? mkdtempSync(join(tmpdir(), `honeybee-${kind}-`));
  // node_id as a bare JSON integer literal above 2^53, the form most likely to lose digits.
  const file = { ...config, pot_id: `${kind}-test`, pot_type: kind, event_host: "127.0.0.1", event_port: relay ? String(relay.port) : "" };
  writeFileSync(join(potDir, "config.json"), JSON.stringify(file).replace(/}$/, `,"node_id":${NODE_ID}}`));
  const proc = Bun.spawn([process.execPath, join(SRC, kind, "main.ts")], {
    cwd: potDir,
    env: { PATH: process.env.PATH ?? "", HONEYBEE_CONFIG: join(potDir, "config.json") },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  // Drained as it comes, so a chatty log can never fill the pipe and stall the honeypot.
  const stderr = new Response(proc.stderr).text();
  const reader = proc.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`${kind} exited before its ready line: ${await stderr}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  const ready = JSON.parse(out.slice(0, out.indexOf("\n")));
  for (const name of PORT_NAMES[kind]) {
    if (typeof ready.ports?.[name] !== "number") throw new Error(`${kind}'s ready line has no ${name} port: ${out}`);
  }
  const logFile = join(potDir, config.log_path ?? "log", `${kind}.json`);
  return {
    dir: potDir,
    ports: ready.ports,
    proc,
    fileLines: () => readFileSync(logFile, "utf8").split("\n").filter(Boolean),
    async stop() {
      proc.kill("SIGTERM");
      return await proc.exited;
    },
  };
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** A raw TCP client that keeps everything it receives, for prompts that end without a newline. */
export class RawClient {
  private received = Buffer.alloc(0);
  private readonly growth = new Arrivals<number>();
  readonly closed: Promise<void>;
  socket!: Socket<undefined>;
  /** Kept from the start: a closed socket no longer reports it. */
  localPort = 0;

  private constructor(closed: Promise<void>) {
    this.closed = closed;
  }

  static async connect(port: number): Promise<RawClient> {
    const { promise, resolve } = Promise.withResolvers<void>();
    const client = new RawClient(promise);
    client.socket = await Bun.connect<undefined>({
      hostname: "127.0.0.1",
      port,
      socket: {
        data: (_s, chunk) => {
          client.received = Buffer.concat([client.received, chunk]);
          client.growth.push(client.received.length);
        },
        close: () => resolve(),
        error: () => resolve(),
      },
    });
    client.localPort = client.socket.localPort;
    return client;
  }

  get bytes(): Buffer {
    return this.received;
  }

  get text(): string {
    return this.received.toString("latin1");
  }

  /** Waits until the text received so far contains `needle` `times` times. */
  async waitFor(needle: string, times = 1): Promise<string> {
    const enough = () => this.text.split(needle).length - 1 >= times;
    if (!enough()) await this.growth.next(enough);
    return this.text;
  }

  send(data: string | Uint8Array): void {
    this.socket.write(data);
  }

  close(): void {
    this.socket.end();
  }
}

/** Runs a command to completion and returns its exit code and output. */
export async function run(argv: string[], stdin?: string, env?: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn(argv, { stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe", env });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
