/**
 * Live-feed bench: how far fan-out goes. Events go into Core's event socket at a fixed rate
 * and out to 1, 100 and 1,000 WebSocket subscribers (in separate processes); the rate is
 * raised step by step (doubling) until delivery falls behind, then BENCH_FEED_REFINE steps
 * halve the gap around the knee, for Core and for a raw Bun.serve publishing the same
 * frames, interleaved in the same run. Each step reports the ingest rate the producer kept,
 * frames offered (events/s x subscribers) and delivered (from the first frame to the last),
 * p50/p99 ingest-to-client latency and cut clients. A step keeps up when delivered >= 95% of
 * offered, p99 <= BENCH_FEED_P99_MS and no client was cut; the knee of each server is its
 * highest rate that kept up below the lowest that did not. Each step starts a fresh server
 * and fresh subscribers, and feeds them BENCH_FEED_WARMUP seconds of events at the step's
 * rate before the count starts: a server runs for weeks, and a fresh Core's first seconds
 * (its code compiled, its address data loaded by each thread, ~0.3 s each, at the first
 * counter flush and at the first published event) were the p99 of every low-rate step. The
 * default warm-up passes Core's first counter flush (`stats_flush_ms`, 5 s), and the default
 * step (5 s) holds the next one, as steady traffic does.
 *
 *   bun bench/feed.ts
 *   BENCH_FEED_SUBSCRIBERS=100 BENCH_FEED_RATE_MAX=8000 BENCH_FEED_SECONDS=1 bun bench/feed.ts   # quick run
 *
 * Env: BENCH_FEED_SUBSCRIBERS ("1,100,1000"), BENCH_FEED_RATE_START (1000 events/s),
 * BENCH_FEED_RATE_MAX (512000), BENCH_FEED_SECONDS (5 per step), BENCH_FEED_WARMUP (6 seconds),
 * BENCH_FEED_DRAIN_MS (3000), BENCH_FEED_P99_MS (1000), BENCH_FEED_REFINE (2).
 */
import { BUN, ROOT, firstJsonLine, lineReader, spawnCore, table } from "./lib";
import { rmSync } from "node:fs";
import { join } from "node:path";

const RATE_START = Number(process.env.BENCH_FEED_RATE_START ?? 1000);
const RATE_MAX = Number(process.env.BENCH_FEED_RATE_MAX ?? 512_000);
const P99_MS = Number(process.env.BENCH_FEED_P99_MS ?? 1000);
const REFINE = Number(process.env.BENCH_FEED_REFINE ?? 2);
/** Delivered frames below this share of offered: the server fell behind. */
const KEEP_UP = 0.95;
const SECONDS = Number(process.env.BENCH_FEED_SECONDS ?? 5);
const WARMUP = Number(process.env.BENCH_FEED_WARMUP ?? 6);
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

/** Sends events at `rate` per second for `seconds` over one TCP connection, in 10 ms ticks. */
async function produce(port: number, rate: number, seconds: number): Promise<{ sent: number; seconds: number }> {
  const pending: string[] = [];
  const drained = { resolve: () => {} };
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
        drained.resolve();
      },
      data() {},
    },
  });
  const total = Math.round(seconds * rate);
  const start = performance.now();
  let sent = 0;
  const send = (due: number) => {
    let batch = "";
    for (; sent < due; sent++) batch += eventLine(sent) + "\n";
    if (!batch) return;
    if (pending.length) pending.push(batch);
    else {
      const n = sock.write(batch);
      if (n < batch.length) pending.push(batch.slice(n));
    }
  };
  while (performance.now() - start < seconds * 1000) {
    send(Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate)));
    await Bun.sleep(10);
  }
  // A late last tick (a busy machine) must not shorten the step: the rest goes now.
  send(total);
  const took = (performance.now() - start) / 1000;
  // What the server has not read yet still counts as offered: wait for it (up to the drain time).
  if (pending.length) await Promise.race([new Promise<void>((r) => (drained.resolve = r)), Bun.sleep(DRAIN_MS)]);
  sock.end();
  return { sent, seconds: took };
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
    /** Counts from now on (after the warm-up). */
    async reset() {
      for (const p of procs) {
        p.proc.stdin.write("reset\n");
        await p.proc.stdin.flush();
      }
      // Each answers once it has started counting again.
      for (const p of procs) await p.out.next();
    },
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
        firstAt: Math.min(...results.map((r) => r.firstAt || Infinity)),
        lastAt: Math.max(...results.map((r) => r.lastAt)),
        p50: q(0.5),
        p99: q(0.99),
      };
    },
  };
}

interface Step {
  server: "core" | "raw Bun.serve";
  subscribers: number;
  rate: number;
  ingest: number;
  offered: number;
  delivered: number;
  p50: number;
  p99: number;
  cut: number;
  /** The producer itself could not generate the rate: the sweep stops here, without a verdict. */
  producerLimited: boolean;
  keepsUp: boolean;
}

async function step(server: Step["server"], n: number, rate: number): Promise<Step> {
  let stop: () => Promise<void>;
  let wsUrl: string;
  let ingestPort: number;
  if (server === "core") {
    // Core: events through the event socket, normalised, committed, published.
    // All subscribers come from 127.0.0.1: lift the per-address connection cap for the bench.
    const core = await spawnCore(["--log-events", "false"], { HONEYBEE_MAX_CONNECTIONS_PER_ADDRESS: "0" });
    wsUrl = `ws://127.0.0.1:${core.ports.ws}/?kinds=PotEvent`;
    ingestPort = core.ports.event;
    stop = async () => {
      core.proc.kill("SIGTERM");
      await core.proc.exited;
      // A database per step: dozens of them in a sweep.
      rmSync(core.dir, { recursive: true, force: true });
    };
  } else {
    // Baseline: raw Bun.serve publishing the same frames.
    const raw = Bun.spawn([BUN, join(ROOT, "bench/feed-raw-fixture.ts")], { stdout: "pipe" });
    const ports = await firstJsonLine(raw);
    wsUrl = `ws://127.0.0.1:${ports.ws}/`;
    ingestPort = ports.ingest;
    stop = async () => {
      raw.kill();
      await raw.exited;
    };
  }
  try {
    const subs = await subscribers(wsUrl, n);
    if (WARMUP > 0) {
      await produce(ingestPort, rate, WARMUP);
      // What the warm-up left queued arrives before the count starts again.
      await Bun.sleep(DRAIN_MS);
      await subs.reset();
    }
    const { sent, seconds } = await produce(ingestPort, rate, SECONDS);
    await Bun.sleep(DRAIN_MS);
    const r = await subs.stop();
    const offered = (sent * n) / seconds;
    // From the first frame to the last: a server's steady latency shifts both ends alike, a
    // backlog stretches the end. Never over less than the time the events were sent in.
    const delivered = r.received / Math.max(seconds, (r.lastAt - r.firstAt) / 1000);
    const producerLimited = sent / seconds < KEEP_UP * rate;
    const keepsUp = delivered >= KEEP_UP * offered && r.received >= KEEP_UP * sent * n && r.p99 <= P99_MS && r.closed === 0;
    return { server, subscribers: n, rate, ingest: sent / seconds, offered, delivered, p50: r.p50, p99: r.p99, cut: r.closed, producerLimited, keepsUp };
  } finally {
    await stop();
  }
}

export async function benchFeed(): Promise<string> {
  const steps: Step[] = [];
  const knees: (string | number)[][] = [];
  for (const n of SUBSCRIBERS) {
    const open = new Set<Step["server"]>(["core", "raw Bun.serve"]);
    // Interleaved: each rate on Core, then on the raw server, until both have fallen behind.
    for (let rate = RATE_START; rate <= RATE_MAX && open.size > 0; rate *= 2) {
      for (const server of [...open]) {
        const s = await step(server, n, rate);
        steps.push(s);
        if (s.producerLimited || !s.keepsUp) open.delete(server);
      }
    }
    const knee = (server: Step["server"]) => {
      const mine = steps.filter((s) => s.server === server && s.subscribers === n && !s.producerLimited);
      const fell = mine.filter((s) => !s.keepsUp).sort((a, b) => a.rate - b.rate)[0];
      const kept = mine.filter((s) => s.keepsUp && (!fell || s.rate < fell.rate)).sort((a, b) => a.rate - b.rate).at(-1);
      return { kept, fell, text: kept ? `${Math.round(kept.rate).toLocaleString("en-US")} events/s (${Math.round(kept.delivered).toLocaleString("en-US")} frames/s)` : "below the first step" };
    };
    // Then halve the gap between the last rate that kept up and the first that did not
    // (geometrically), BENCH_FEED_REFINE times, the servers again interleaved.
    for (let i = 0; i < REFINE; i++) {
      for (const server of ["core", "raw Bun.serve"] as const) {
        const { kept, fell } = knee(server);
        if (!kept || !fell || fell.rate / kept.rate < 1.2) continue;
        steps.push(await step(server, n, Math.round(Math.sqrt(kept.rate * fell.rate) / 100) * 100));
      }
    }
    const c = knee("core");
    const r = knee("raw Bun.serve");
    const upTo = (server: Step["server"], k: ReturnType<typeof knee>) => {
      if (k.fell) return `falls behind at ${k.fell.rate.toLocaleString("en-US")}`;
      const limited = steps.find((s) => s.server === server && s.subscribers === n && s.producerLimited);
      return limited ? `the producer could not send ${limited.rate.toLocaleString("en-US")}/s (busy machine?)` : "kept up with every step";
    };
    knees.push([n, c.text, upTo("core", c), r.text, upTo("raw Bun.serve", r), c.kept && r.kept ? `${(c.kept.delivered / r.kept.delivered).toFixed(2)}` : "n/a"]);
  }
  // In rate order; the run interleaved them.
  const rows = [...steps].sort((a, b) => a.subscribers - b.subscribers || a.rate - b.rate || a.server.localeCompare(b.server)).map((s) => [
    s.server,
    s.subscribers,
    s.rate,
    s.ingest,
    s.offered,
    s.delivered,
    `${((100 * s.delivered) / s.offered).toFixed(0)}%`,
    s.p50,
    s.p99,
    s.cut,
    s.producerLimited ? "producer limit" : s.keepsUp ? "yes" : "no",
  ]);
  return [
    `Live feed: ${SECONDS} s per step after ${WARMUP} s of warm-up, rates doubling from ${RATE_START.toLocaleString("en-US")} to at most ${RATE_MAX.toLocaleString("en-US")} events/s, then ${REFINE} step(s) between the knee's two rates; keeps up = delivered >= ${KEEP_UP * 100}% of offered, p99 <= ${P99_MS} ms, no client cut.`,
    "",
    table(["server", "subscribers", "target events/s", "ingest events/s", "offered frames/s", "delivered frames/s (first to last frame)", "delivered", "p50 ms", "p99 ms", "cut clients", "keeps up"], rows),
    "",
    "Knee (the highest rate that kept up; frames/s delivered there), ratio = Core's knee / raw's knee in delivered frames/s:",
    "",
    table(["subscribers", "Core knee", "Core", "raw Bun.serve knee", "raw Bun.serve", "ratio Core/raw"], knees),
  ].join("\n");
}

if (import.meta.main) console.log(await benchFeed());
