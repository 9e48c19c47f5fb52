/**
 * Live-feed bench: events sent at a fixed rate (default 10,000/s) into Core's event socket and
 * fanned out to 1, 100 and 1,000 WebSocket subscribers (in separate processes). Reports
 * delivered frames/s, p50/p99 ingest-to-client latency, cut clients and the ingest rate Core
 * kept, next to a raw Bun.serve publishing the same frames, measured in the same run.
 */
import { BUN, ROOT, firstJsonLine, lineReader, spawnCore, table } from "./lib";
import { join } from "node:path";

const RATE = Number(process.env.BENCH_FEED_RATE ?? 10_000);
const SECONDS = Number(process.env.BENCH_FEED_SECONDS ?? 3);
const SUBSCRIBERS = (process.env.BENCH_FEED_SUBSCRIBERS ?? "1,100,1000").split(",").map(Number);
const CLIENT_PROCS = 2;
/** After the producer stops, time for frames still queued to arrive; delivered/s counts up to the last one. */
const DRAIN_MS = Number(process.env.BENCH_FEED_DRAIN_MS ?? 3000);

function eventLine(i: number): string {
  const ip = `198.51.${(i >> 8) & 255}.${i & 255}`;
  return JSON.stringify({
    eventid: "cowrie.login.failed",
    pot_id: "ssh-bench",
    pot_type: "cowrie",
    src_ip: ip,
    session: (i % 65536).toString(16).padStart(12, "0"),
    username: "root",
    password: `pw${i % 1000}`,
    message: `login attempt [root/pw${i % 1000}] failed`,
    sent_at: performance.timeOrigin + performance.now(),
  });
}

/** Sends events at RATE per second for SECONDS over one TCP connection, in 10 ms ticks. */
async function produce(port: number): Promise<{ sent: number; seconds: number; startedAt: number }> {
  const pending: string[] = [];
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      drain(s) {
        while (pending.length) {
          const chunk = pending[0]!;
          const n = s.write(chunk);
          if (n < chunk.length) {
            pending[0] = chunk.slice(n);
            return;
          }
          pending.shift();
        }
      },
      data() {},
    },
  });
  const start = performance.now();
  const startedAt = Date.now();
  let sent = 0;
  while (performance.now() - start < SECONDS * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * RATE);
    let batch = "";
    for (; sent < due; sent++) batch += eventLine(sent) + "\n";
    if (batch) {
      if (pending.length) pending.push(batch);
      else {
        const n = sock.write(batch);
        if (n < batch.length) pending.push(batch.slice(n));
      }
    }
    await Bun.sleep(10);
  }
  sock.end();
  return { sent, seconds: (performance.now() - start) / 1000, startedAt };
}

async function subscribers(url: string, total: number) {
  const per = Math.ceil(total / Math.min(CLIENT_PROCS, total));
  const procs: { proc: Bun.Subprocess<"pipe", "pipe", "inherit">; out: ReturnType<typeof lineReader> }[] = [];
  for (let left = total; left > 0; left -= per) {
    const proc = Bun.spawn([BUN, join(ROOT, "bench/feed-subscriber-fixture.ts"), url, String(Math.min(per, left)), "20"], { stdin: "pipe", stdout: "pipe" });
    procs.push({ proc, out: lineReader(proc.stdout) });
  }
  for (const p of procs) await p.out.next();
  return {
    async stop() {
      const results = [];
      for (const p of procs) {
        p.proc.stdin.end();
        results.push(JSON.parse((await p.out.rest()).trim().split("\n").pop()!));
      }
      const lat = results.flatMap((r) => r.latencies).sort((a: number, b: number) => a - b);
      const q = (f: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(f * lat.length))] : NaN);
      return {
        received: results.reduce((a, r) => a + r.received, 0),
        closed: results.reduce((a, r) => a + r.closed, 0),
        lastAt: Math.max(...results.map((r) => r.lastAt)),
        p50: q(0.5),
        p99: q(0.99),
      };
    },
  };
}

export async function benchFeed(): Promise<string> {
  const rows: (string | number)[][] = [];
  for (const n of SUBSCRIBERS) {
    // Core: events through the event socket, normalised, committed, published.
    // All subscribers come from 127.0.0.1: lift the per-address connection cap for the bench.
    const core = await spawnCore(["--log-events", "false"], { HONEYBEE_MAX_CONNECTIONS_PER_ADDRESS: "0" });
    try {
      const subs = await subscribers(`ws://127.0.0.1:${core.ports.ws}/?kinds=PotEvent`, n);
      const { sent, seconds, startedAt } = await produce(core.ports.event);
      await Bun.sleep(DRAIN_MS);
      const r = await subs.stop();
      rows.push(["core", n, sent / seconds, r.received / ((r.lastAt - startedAt) / 1000), r.p50, r.p99, r.closed]);
    } finally {
      core.proc.kill("SIGTERM");
      await core.proc.exited;
    }
    // Baseline: raw Bun.serve publishing the same frames.
    const raw = Bun.spawn([BUN, join(ROOT, "bench/feed-raw-fixture.ts")], { stdout: "pipe" });
    try {
      const ports = await firstJsonLine(raw);
      const subs = await subscribers(`ws://127.0.0.1:${ports.ws}/`, n);
      const { sent, seconds, startedAt } = await produce(ports.ingest);
      await Bun.sleep(DRAIN_MS);
      const r = await subs.stop();
      rows.push(["raw Bun.serve", n, sent / seconds, r.received / ((r.lastAt - startedAt) / 1000), r.p50, r.p99, r.closed]);
    } finally {
      raw.kill();
    }
  }
  const out = [table(["server", "subscribers", "ingest events/s", "delivered frames/s (to the last frame)", "p50 ms", "p99 ms", "cut clients"], rows)];
  const ratios = SUBSCRIBERS.map((n, i) => `${n} subscribers: delivered ratio core/raw = ${((rows[2 * i]![3] as number) / (rows[2 * i + 1]![3] as number)).toFixed(2)}`);
  return [...out, "", ...ratios].join("\n");
}

if (import.meta.main) console.log(await benchFeed());
