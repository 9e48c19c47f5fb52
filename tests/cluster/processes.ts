/**
 * `honeybee core` instances as separate processes (a SIGKILL must kill one instance, not the
 * test), on port 0 everywhere, with their log lines kept for the assertions.
 */
import type { Subprocess } from "bun";
import { join } from "node:path";
import { stringify } from "../../src/protocol/json";
import { BUN, ROOT } from "../helpers";

export interface CoreProcess {
  readonly proc: Subprocess<"ignore", "pipe", "pipe">;
  readonly ports: { node: number; api: number; ws: number; event: number };
  readonly instance: string;
  readonly api: string;
  readonly ws: string;
  /** Every log line so far, parsed. */
  readonly logs: any[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface CoreProcessOptions {
  db: string;
  /** Without a bus (and cluster), one instance alone on `db`. */
  bus?: string;
  cluster?: string;
  roles?: string;
  /** Fixed ports (a restarted instance on the same ports); 0 by default. */
  ports?: Partial<{ node: number; api: number; ws: number; event: number }>;
  args?: string[];
  /** Extra environment, for settings that are no flags (secrets such as node_enrollment_token). */
  env?: Record<string, string>;
}

export async function spawnCore(o: CoreProcessOptions): Promise<CoreProcess> {
  const p = { node: 0, api: 0, ws: 0, event: 0, ...o.ports };
  const args = ["core", "--db", o.db, ...(o.bus ? ["--bus", o.bus, "--cluster", o.cluster ?? ""] : []), "--roles", o.roles ?? "ingest,api,proxy,writer", "--host", "127.0.0.1"];
  args.push("--node-port", String(p.node), "--api-port", String(p.api), "--ws-port", String(p.ws), "--event-port", String(p.event));
  args.push("--log-level", "info", "--log-events=false", ...(o.args ?? []));
  const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), ...args], { cwd: ROOT, env: { ...process.env, ...o.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const logs: any[] = [];
  const started = Promise.withResolvers<any>();
  let raw = "";
  // Read to the end: a process whose stdout is not read dies of EPIPE on its next log line.
  void (async () => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of proc.stdout) {
      rest += decoder.decode(chunk);
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        raw += `${line}\n`;
        try {
          const rec = JSON.parse(line);
          logs.push(rec);
          if (rec.msg === "core started") started.resolve(rec);
        } catch {}
      }
    }
  })();
  void proc.exited.then(async (code) => started.reject(new Error(`core exited (${code}) before starting: ${raw}${await new Response(proc.stderr).text()}`)));
  const rec = await started.promise;
  return {
    proc,
    ports: rec.ports,
    instance: rec.instance,
    api: `http://127.0.0.1:${rec.ports.api}`,
    ws: `ws://127.0.0.1:${rec.ports.ws}`,
    logs,
    kill: async (signal = "SIGTERM") => {
      proc.kill(signal);
      await proc.exited;
    },
  };
}

/**
 * A producer as a node's forwarder behaves: events numbered 1..n in a spool, sent with
 * EventStreamHello {acks, spool_id, first_seq}; when its connection is lost it connects to the
 * next address and sends again everything after the last acknowledged event. With `nodeId`
 * the hello names the node, and an instance where that node is registered from this address
 * takes the spool positions: what it resends is stored once. Without, Core cannot tell a resend
 * from new events.
 */
export class AckedProducer {
  acked = 0;
  private sock: import("bun").Socket<undefined> | null = null;
  private text = "";
  private target = 0;
  reconnects = 0;

  constructor(
    private readonly ports: () => number[],
    private readonly line: (seq: number) => string,
    readonly spoolId = crypto.randomUUID().replaceAll("-", "").slice(0, 16),
    private readonly window = 2000,
    private readonly nodeId?: bigint,
  ) {}

  /** Sends events up to `n` (and again after each reconnect); resolves once all of them are acknowledged. */
  async run(n: number, timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acked < n) {
      if (Date.now() > deadline) throw new Error(`producer: only ${this.acked} of ${n} events acknowledged`);
      // An object around the promise: awaiting the promise itself would wait for the close.
      const conn = await this.connect(n).catch(() => null);
      if (!conn) {
        this.reconnects++;
        await Bun.sleep(200);
        continue;
      }
      await Promise.race([conn.closed, this.untilAcked(n)]);
      if (this.acked < n) {
        this.reconnects++;
        this.sock?.end();
        await Bun.sleep(100);
      }
    }
    this.sock?.end();
  }

  /** Waiting for acks up to `n` (one `run` at a time); settled by the ack that reaches it. */
  private ackWaiter: { n: number; resolve(): void } | null = null;

  /** Resolves once events up to `n` are acknowledged (a lost connection ends the wait through `closed`). */
  private untilAcked(n: number): Promise<void> {
    if (this.acked >= n) return Promise.resolve();
    const w = Promise.withResolvers<void>();
    this.ackWaiter = { n, resolve: w.resolve };
    return w.promise;
  }

  private async connect(n: number): Promise<{ closed: Promise<void> }> {
    const list = this.ports();
    const port = list[this.target++ % list.length]!;
    const closed = Promise.withResolvers<void>();
    const first = this.acked + 1;
    let next = first;
    let pending: Buffer = Buffer.alloc(0);
    this.text = "";
    // At most `window` events unacknowledged, as a node's forwarder sends its spool; the
    // socket takes what it can, the rest goes when it drains.
    const fill = (s: import("bun").Socket<undefined>) => {
      for (;;) {
        while (pending.length > 0) {
          const k = s.write(pending);
          if (k <= 0) return;
          pending = pending.subarray(k);
        }
        if (next > n || next > this.acked + this.window) return;
        let out = "";
        for (; next <= n && next <= this.acked + this.window; next++) out += `${this.line(next)}\n`;
        pending = Buffer.from(out);
      }
    };
    const sock = await Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        drain: (s) => fill(s),
        data: (s, chunk) => {
          this.text += chunk.toString();
          let nl: number;
          while ((nl = this.text.indexOf("\n")) >= 0) {
            const l = this.text.slice(0, nl);
            this.text = this.text.slice(nl + 1);
            const seq = JSON.parse(l)?.message?.EventAck?.seq;
            // Acks count lines of this connection: line L is spool event first + L - 1.
            if (typeof seq === "number") this.acked = Math.max(this.acked, first + seq - 1);
          }
          if (this.ackWaiter && this.acked >= this.ackWaiter.n) {
            this.ackWaiter.resolve();
            this.ackWaiter = null;
          }
          fill(s);
        },
        close: () => {
          this.sock = null;
          closed.resolve();
        },
        error: () => closed.resolve(),
      },
    });
    this.sock = sock;
    const node = this.nodeId === undefined ? {} : { node_id: this.nodeId };
    pending = Buffer.from(`${stringify({ version: 2, message: { EventStreamHello: { ...node, acks: true, spool_id: this.spoolId, first_seq: first - 1 } } })}\n`);
    fill(sock);
    return { closed: closed.promise };
  }
}
