/**
 * Growth bench: what Core costs as its database grows. For each size, a database is filled
 * with that many stored events through Core itself (its event socket, a streaming producer:
 * bench/growth-fill-fixture.ts), spaced like steady traffic so that the newest are "now" and
 * the largest size spans BENCH_GROWTH_DAYS days; the oldest event is the only one from its
 * source address. Then, with Core restarted on it (start-up time measured):
 *
 * - ingest rate of BENCH_GROWTH_EVENTS more events through the real event socket (with acks),
 *   next to the same ingest into an empty database, interleaved (BENCH_GROWTH_ROUNDS rounds,
 *   medians): the ratio grown/empty shows what the size costs, whatever the machine's load;
 * - REST latency through real HTTP (median of BENCH_GROWTH_QUERIES requests after one warm-up,
 *   each right after one event was committed, so that no events page comes from Core's memory):
 *   the latest page, the source address seen once (every page until next_cursor is null:
 *   the pages the bounded scan needs), an event type filter (first page of a 3% type), stats
 *   over 24 h and 7 days, and GET /health as the floor of an HTTP round trip.
 *
 *   bun bench/growth.ts      # full run: 1M, 10M and 30M stored events (about 300 bytes of disk per event: 9 GB at the largest)
 *   BENCH_GROWTH_SIZES=2e5,1e6 BENCH_GROWTH_EVENTS=100000 bun bench/growth.ts   # quick run
 *
 * Before the fill the bench marks the days before the first event as already summed up in the
 * daily counters (event_meta "counts_daily_through"), as they are in a database that grew in
 * real time; without it Core would take the whole history for late arrivals to finished days.
 * After it, a trickle of events lets Core sum up the days the fill went through (one per
 * counter flush).
 *
 * Env: BENCH_GROWTH_SIZES ("1e6,10e6,30e6"), BENCH_GROWTH_EVENTS (500000),
 * BENCH_GROWTH_ROUNDS (3), BENCH_GROWTH_CONNECTIONS (1), BENCH_GROWTH_DAYS (14),
 * BENCH_GROWTH_QUERIES (7), BENCH_GROWTH_DIR (where the databases go; default the temp dir).
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db";
import { ADDRESS_COUNT, NODE_ID, addressOf, eventLinesOf } from "./ingest-events";
import { BUN, median, startCoreOn, table } from "./lib";

const SIZES = (process.env.BENCH_GROWTH_SIZES ?? "1e6,10e6,30e6").split(",").map((s) => Math.round(Number(s)));
const EVENTS = Number(process.env.BENCH_GROWTH_EVENTS ?? 500_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_GROWTH_ROUNDS ?? 3));
const CONNECTIONS = Number(process.env.BENCH_GROWTH_CONNECTIONS ?? 1);
const DAYS = Number(process.env.BENCH_GROWTH_DAYS ?? 14);
const QUERIES = Math.max(1, Number(process.env.BENCH_GROWTH_QUERIES ?? 7));
const BASE_DIR = process.env.BENCH_GROWTH_DIR ?? tmpdir();
const DAY_MS = 86_400_000;
/** TEST-NET-1: an address the event generator never produces (checked below). */
export const UNIQUE_IP = "192.0.2.1";
/** Spacing of the stored events: the largest size spans DAYS days. */
const STEP_MS = (DAYS * DAY_MS) / Math.max(...SIZES);
const CORE_ENV = { HONEYBEE_API_RATE_PER_MINUTE: "0" };

for (let a = 0; a < ADDRESS_COUNT; a++) if (addressOf(a) === UNIQUE_IP) throw new Error(`${UNIQUE_IP} is one of the generator's addresses`);

/**
 * Fills a new database with `size` events through Core, `stepMs` apart (the newest now);
 * returns seconds taken. scripts/console-page-times.ts grows its database with it too.
 */
export async function fill(path: string, size: number, stepMs = STEP_MS): Promise<number> {
  const baseMs = Date.now() - size * stepMs;
  const db = openDatabase(path);
  db.$client.run("INSERT INTO event_meta (key, value) VALUES ('counts_daily_through', ?)", [Math.floor(baseMs / DAY_MS) - 1]);
  db.$client.close();
  // Counters written (and whole days summed up) every 200 ms instead of 5 s, so that the
  // daily roll-up keeps pace with days of history arriving in seconds.
  const core = await startCoreOn(path, ["--log-events", "false"], { ...CORE_ENV, HONEYBEE_STATS_FLUSH_MS: "200" });
  try {
    const filler = Bun.spawn([BUN, join(import.meta.dir, "growth-fill-fixture.ts"), JSON.stringify({ port: core.ports.event, count: size, baseMs, stepMs, uniqueIp: UNIQUE_IP, seed: 11 })], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(filler.stdout).text();
    if ((await filler.exited) !== 0) throw new Error(`the filler failed: ${out}`);
    await catchUpDaily(core.ports.event, path);
    return JSON.parse(out).ms / 1000;
  } finally {
    await core.stop();
  }
}

/**
 * Core sums up at most one finished day per counter flush, and flushes only when new events
 * were counted: a trickle of events (a few per second, timed now) until every finished day is
 * summed up, as it would be in a database that grew in real time. At most a minute.
 */
async function catchUpDaily(port: number, path: string): Promise<void> {
  const sock = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
  const make = eventLinesOf("flat", 13, Date.now());
  try {
    const yesterday = Math.floor(Date.now() / DAY_MS) - 1;
    for (let i = 0; i < 240 && dailyThrough(path) < yesterday; i++) {
      sock.write(make(i) + "\n");
      await Bun.sleep(250);
    }
  } finally {
    sock.end();
  }
}

/** Days (since the epoch) the daily counters cover (read beside Core: WAL). */
function dailyThrough(path: string): number {
  const db = new Database(path, { readonly: true });
  try {
    return (db.query("SELECT value FROM event_meta WHERE key = 'counts_daily_through'").get() as { value: number } | null)?.value ?? -1;
  } finally {
    db.close();
  }
}

/** Ingests EVENTS flat events through the event socket with acks; returns events/s. */
async function ingest(port: number): Promise<number> {
  const proc = Bun.spawn([BUN, join(import.meta.dir, "ingest-producer-fixture.ts"), JSON.stringify({ port, events: EVENTS, connections: CONNECTIONS, seed: 7, baseMs: Date.now() - EVENTS, acks: true, shape: "flat" })], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const p = JSON.parse(out.trim().split("\n").pop()!) as { start: number; end: number };
  return EVENTS / ((p.end - p.start) / 1000);
}

/**
 * Commits one event at a time through the event socket (acks on). Core answers a repeated
 * events page from memory until the stored events change, so each timed request comes right
 * after a commit, as a console's first poll after new events does: the page is built.
 */
async function committer(port: number) {
  const make = eventLinesOf("flat", 13, Date.now());
  let sent = 0;
  let acked = 0;
  let text = "";
  let waiter: (() => void) | null = null;
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, chunk) {
        text += chunk.toString();
        const nl = text.lastIndexOf("\n");
        if (nl < 0) return;
        for (const m of text.slice(0, nl).matchAll(/"seq":(\d+)/g)) acked = Math.max(acked, Number(m[1]));
        text = text.slice(nl + 1);
        if (acked >= sent) waiter?.();
      },
    },
  });
  sock.write(`{"version":2,"message":{"EventStreamHello":{"node_id":${NODE_ID},"acks":true}}}\n`);
  return {
    async commitOne(): Promise<void> {
      const done = new Promise<void>((resolve) => (waiter = resolve));
      sock.write(`${make(sent++)}\n`);
      await done;
    },
    close: () => sock.end(),
  };
}

/** Median ms of QUERIES runs of `run` after one warm-up, each run right after a commit. */
async function latency(run: () => Promise<void>, commitOne: () => Promise<void>): Promise<number> {
  await run();
  const ms: number[] = [];
  for (let i = 0; i < QUERIES; i++) {
    await commitOne();
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  return median(ms);
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

async function rest(api: string, eventPort: number) {
  const events = `${api}/api/v1/events`;
  const c = await committer(eventPort);
  let pages = 0;
  let found = 0;
  const seenOnce = async () => {
    pages = 0;
    found = 0;
    let cursor: string | null = null;
    do {
      const page: { events: unknown[]; next_cursor: string | number | null } = await getJson(`${events}?src_ip=${UNIQUE_IP}${cursor === null ? "" : `&cursor=${cursor}`}`);
      pages++;
      found += page.events.length;
      cursor = page.next_cursor === null ? null : String(page.next_cursor);
    } while (cursor !== null);
  };
  const r = {
    latest: await latency(async () => void (await getJson(`${events}?limit=100`)), c.commitOne),
    seenOnce: await latency(seenOnce, c.commitOne),
    eventType: await latency(async () => void (await getJson(`${events}?event_type=cowrie.command.input&limit=100`)), c.commitOne),
    stats24h: await latency(async () => void (await getJson(`${api}/api/v1/stats?window=24h`)), c.commitOne),
    stats7d: await latency(async () => void (await getJson(`${api}/api/v1/stats?window=7d`)), c.commitOne),
    health: await latency(async () => void (await (await fetch(`${api}/health`)).arrayBuffer()), c.commitOne),
    pages,
  };
  c.close();
  if (found !== 1) throw new Error(`the address seen once was found ${found} times`);
  return r;
}

export async function benchGrowth(): Promise<string> {
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  for (const size of SIZES) {
    const dir = mkdtempSync(join(BASE_DIR, "honeybee-growth-"));
    try {
      const grown = join(dir, "grown.db");
      const fillSeconds = await fill(grown, size);
      const today = Math.floor(Date.now() / DAY_MS);
      const through = dailyThrough(grown);
      if (through < today - 1) notes.push(`${size.toLocaleString("en-US")}: the daily counters were ${today - 1 - through} day(s) behind after the fill (Core catches up one per counter flush)`);
      const grownRates: number[] = [];
      const emptyRates: number[] = [];
      let startMs = 0;
      let r: Awaited<ReturnType<typeof rest>> | null = null;
      for (let round = 0; round < ROUNDS; round++) {
        // The same ingest into an empty database, right before: the same machine load.
        const empty = join(dir, `empty-${round}.db`);
        const e = await startCoreOn(empty, ["--log-events", "false"], CORE_ENV);
        try {
          emptyRates.push(await ingest(e.ports.event));
        } finally {
          await e.stop();
          for (const s of ["", "-wal", "-shm", ".log"]) rmSync(empty + s, { force: true });
        }
        const core = await startCoreOn(grown, ["--log-events", "false"], CORE_ENV);
        try {
          if (round === 0) startMs = core.startMs;
          grownRates.push(await ingest(core.ports.event));
          if (round === ROUNDS - 1) r = await rest(`http://127.0.0.1:${core.ports.api}`, core.ports.event);
        } finally {
          await core.stop();
        }
      }
      const g = median(grownRates);
      const e = median(emptyRates);
      rows.push([
        size.toLocaleString("en-US"),
        fillSeconds.toFixed(0),
        (startMs / 1000).toFixed(2),
        Math.round(g),
        Math.round(e),
        `${(g / e).toFixed(2)}x`,
        r!.latest,
        `${r!.seenOnce.toFixed(1)} (${r!.pages})`,
        r!.eventType,
        r!.stats24h,
        r!.stats7d,
        r!.health,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const first = rows[0];
  const ratioLine =
    rows.length > 1 && first
      ? `Ingest at the largest size vs the smallest (each as its ratio to an empty database in the same round): ${(parseFloat(String(rows.at(-1)![5])) / parseFloat(String(first[5]))).toFixed(2)}x (goal: within 20%).`
      : "";
  return [
    `Growth: stored events spaced ${STEP_MS.toFixed(1)} ms apart (the largest size spans ${DAYS} days, the newest are now); ingest ${EVENTS.toLocaleString("en-US")} events over ${CONNECTIONS} connection(s), median of ${ROUNDS} rounds interleaved with an empty database; REST: median ms of ${QUERIES} requests after a warm-up.`,
    "",
    table(
      ["stored events", "fill s", "Core start s", "ingest events/s", "same, empty DB", "grown/empty", "latest page ms", "src_ip seen once ms (pages)", "event_type ms", "stats 24h ms", "stats 7d ms", "/health ms"],
      rows,
    ),
    "",
    "Goals at 30M: latest page < 10 ms, src_ip seen once < 200 ms, 24 h stats < 300 ms.",
    ...(ratioLine ? [ratioLine] : []),
    ...notes.map((n) => `Note: ${n}`),
  ].join("\n");
}

if (import.meta.main) console.log(await benchGrowth());
