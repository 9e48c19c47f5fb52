/**
 * Ingest bench: a producer process sends realistic events (bench/ingest-events.ts) over 1 and
 * over 8 connections into Core's event socket, on a database that already holds millions of
 * rows, and reports committed events/s end to end, p50/p99 send-to-commit latency (from
 * EventAck) and Core's peak RSS; with event logging on and off, single-threaded, and with the
 * writer stalled. Next to two baselines measured in the same run:
 *   (a) parse and discard, (b) the minimal single-process parse + raw bun:sqlite batched insert.
 *
 *   bun bench/ingest.ts                     # full run (2M events, 3M rows already present)
 *   BENCH_EVENTS=200000 BENCH_PREFILL=500000 bun bench/ingest.ts   # quick run
 *
 * Each scenario runs BENCH_ROUNDS times (default 3), the rounds interleaved (b, Core, Core
 * with log, ..., then again), and the table shows the median run with the range: on a shared
 * machine one run of the same build varies by ±20%.
 *
 * Env: BENCH_EVENTS, BENCH_PREFILL, BENCH_SCENARIOS (comma list of: discard, sqlite, core,
 * core-log, core-single, stall), BENCH_CONNECTIONS (default "1,8"), BENCH_STALL_MS (3000),
 * BENCH_ROUNDS (3).
 */
import { Database } from "bun:sqlite";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defaultCoreConfig } from "../src/config";
import { openDatabase } from "../src/db";
import { MessageBus } from "../src/core/bus";
import { createIngest } from "../src/core/ingest";
import { parseEventLine } from "../src/core/ingest/parse";
import { silentLogger } from "../src/log";
import { eventLines } from "./ingest-events";
import { BUN, ROOT, benchDir, lineReader, table } from "./lib";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000_000);
const PREFILL = Number(process.env.BENCH_PREFILL ?? 3_000_000);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? "discard,sqlite,core,core-log,core-single,stall").split(",");
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "1,8").split(",").map(Number);
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DAY_MS = 86_400_000;

interface Result {
  name: string;
  connections: number;
  rate: number;
  p50: number | null;
  p99: number | null;
  rssMb: number | null;
  note?: string;
  /** Slowest and fastest run, when there were several. */
  range?: [number, number];
}

/** The median run of a scenario (by rate), with the range of all its runs and the largest peak RSS. */
function median(runs: Result[]): Result {
  const sorted = [...runs].sort((a, b) => a.rate - b.rate);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const rss = runs.map((r) => r.rssMb).filter((r): r is number => r !== null);
  return { ...mid, rssMb: rss.length ? Math.max(...rss) : null, range: runs.length > 1 ? [sorted[0]!.rate, sorted.at(-1)!.rate] : undefined };
}

/** Peak resident memory of a process (Linux), in MB. */
function peakRssMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** CPU time so far of each thread of a process (Linux), in clock ticks, by thread id and name. */
function threadTicks(pid: number): Map<number, { name: string; ticks: number }> {
  const out = new Map<number, { name: string; ticks: number }>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ticks: Number(fields[11]) + Number(fields[12]) });
    }
  } catch {
    // Not Linux, or the process is gone: no breakdown.
  }
  return out;
}

/**
 * Where Core's CPU went during a run, µs per event: the receiving (main) thread, the writer
 * and checkpointer threads (Bun names both "Worker"; the writer starts first), the rest (JIT
 * compiler, garbage collector helpers).
 */
function cpuNote(pid: number, before: Map<number, { name: string; ticks: number }>, after: Map<number, { name: string; ticks: number }>): string {
  if (after.size === 0) return "";
  const us = (ticks: number) => ((ticks * 10_000) / EVENTS).toFixed(2); // a tick is 10 ms
  const spent = [...after].map(([tid, t]) => ({ tid, name: t.name, ticks: t.ticks - (before.get(tid)?.ticks ?? 0) }));
  const workers = spent.filter((t) => t.name === "Worker").sort((a, b) => a.tid - b.tid);
  const main = spent.find((t) => t.tid === pid)?.ticks ?? 0;
  const rest = spent.filter((t) => t.tid !== pid && t.name !== "Worker").reduce((n, t) => n + t.ticks, 0);
  const parts = [`receive ${us(main)}`];
  if (workers[0]) parts.push(`writer ${us(workers[0].ticks)}`);
  if (workers[1]) parts.push(`checkpoint ${us(workers[1].ticks)}`);
  parts.push(`other ${us(rest)}`);
  return `CPU µs/event: ${parts.join(", ")}`;
}

async function produce(port: number, connections: number, acks: boolean) {
  const proc = Bun.spawn([BUN, join(import.meta.dir, "ingest-producer-fixture.ts"), JSON.stringify({ port, events: EVENTS, connections, seed: 7, baseMs: Date.now(), acks })], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split("\n").pop()!) as { start: number; end: number; p50: number | null; p99: number | null };
}

/** Fills a Core database with `PREFILL` events through the real pipeline (inline writer). */
async function coreTemplate(path: string): Promise<void> {
  const config = defaultCoreConfig({ db: path, ingest_worker: false, log_events: false, batch_size: 16_384 });
  const db = openDatabase(path);
  const ingest = createIngest({ db, config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const make = eventLines(1, Date.now() - 2 * DAY_MS);
  for (let i = 0; i < PREFILL; i++) {
    ingest.submit(parseEventLine(make(i)), { transport: "events", remote: "prefill" });
    if (i % 50_000 === 49_999) await ingest.flush();
  }
  await ingest.stop();
  db.$client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.$client.close();
}

/** The same rows in baseline (b)'s table: no secondary index, the line as data. */
function baselineTemplate(path: string): void {
  const db = new Database(path, { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL");
  db.exec("CREATE TABLE events (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, node_id TEXT, pot_id TEXT, pot_type TEXT, event_type TEXT NOT NULL, src_ip TEXT, data TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO events (ts, node_id, pot_id, pot_type, event_type, src_ip, data) VALUES (?, ?, ?, ?, ?, ?, ?)");
  const make = eventLines(1, Date.now() - 2 * DAY_MS);
  const fill = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const line = make(i);
      const o = JSON.parse(line);
      insert.run(Date.parse(o.timestamp), String(o.node_id), o.pot_id, o.pot_type, o.eventid, o.src_ip, line);
    }
  });
  for (let i = 0; i < PREFILL; i += 50_000) fill(i, Math.min(PREFILL, i + 50_000));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

async function runBaseline(mode: "discard" | "sqlite", connections: number, dbPath: string): Promise<Result> {
  const server = Bun.spawn([BUN, join(import.meta.dir, "ingest-baseline-fixture.ts"), mode, String(EVENTS), dbPath], { stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(server.stdout);
  const { port } = JSON.parse(await lines.next());
  const producer = produce(port, connections, false);
  const { done } = JSON.parse(await lines.next());
  const p = await producer;
  const rssMb = peakRssMb(server.pid);
  server.kill();
  await server.exited;
  const name = mode === "discard" ? "(a) parse and discard" : "(b) single process, raw bun:sqlite";
  return { name, connections, rate: EVENTS / ((done - p.start) / 1000), p50: null, p99: null, rssMb };
}

async function runCore(name: string, connections: number, dbPath: string, logEvents: boolean, env: Record<string, string> = {}): Promise<Result> {
  const logPath = dbPath + ".log";
  const proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", dbPath, "--log-level", "info", "--log-events", String(logEvents)],
    // Logs go to a file, as in production; a pipe would make this process a second consumer of CPU.
    { stdout: Bun.file(logPath), stderr: "inherit", env: { ...process.env, ...env } },
  );
  let port = 0;
  while (!port) {
    await Bun.sleep(50);
    const started = readFileSync(logPath, "utf8").split("\n").find((l) => l.includes('"core started"'));
    if (started) port = JSON.parse(started).ports.event;
    if (proc.exitCode !== null) throw new Error(`core exited: ${readFileSync(logPath, "utf8")}`);
  }
  const before = threadTicks(proc.pid);
  const p = await produce(port, connections, true);
  const note = cpuNote(proc.pid, before, threadTicks(proc.pid));
  const rssMb = peakRssMb(proc.pid);
  proc.kill("SIGTERM");
  await proc.exited;
  return { name, connections, rate: EVENTS / ((p.end - p.start) / 1000), p50: p.p50, p99: p.p99, rssMb, note };
}

async function runStall(connections: number, dbPath: string): Promise<Result> {
  const server = Bun.spawn([BUN, join(import.meta.dir, "ingest-stall-fixture.ts"), dbPath, String(EVENTS)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const lines = lineReader(server.stdout);
  const { port } = JSON.parse(await lines.next());
  const producer = produce(port, connections, true);
  await Bun.sleep(STALL_MS);
  const stalledRss = peakRssMb(server.pid);
  server.stdin.write("release\n");
  server.stdin.flush();
  const { max_pending } = JSON.parse(await lines.next());
  const p = await producer;
  const rssMb = peakRssMb(server.pid);
  await server.exited;
  return {
    name: `Core, writer stalled ${STALL_MS / 1000} s, then released`,
    connections,
    rate: EVENTS / ((p.end - p.start) / 1000),
    p50: p.p50,
    p99: p.p99,
    rssMb,
    note: `peak RSS while stalled ${stalledRss} MB; at most ${max_pending.toLocaleString("en-US")} events pending`,
  };
}

export async function main(): Promise<string> {
  const dir = benchDir();
  try {
    const coreTpl = join(dir, "core-template.db");
    const baseTpl = join(dir, "baseline-template.db");
    let t = performance.now();
    await coreTemplate(coreTpl);
    baselineTemplate(baseTpl);
    const setup = `prefilled ${PREFILL.toLocaleString("en-US")} rows in each database in ${((performance.now() - t) / 1000).toFixed(0)} s`;
    const fresh = (tpl: string, name: string) => {
      const path = join(dir, `${name}.db`);
      for (const s of ["", "-wal", "-shm", ".log"]) rmSync(path + s, { force: true });
      copyFileSync(tpl, path);
      return path;
    };

    const results: Result[] = [];
    for (const c of CONNECTIONS) {
      if (SCENARIOS.includes("discard")) results.push(await runBaseline("discard", c, ""));
      const runs = new Map<string, Result[]>();
      const add = (r: Result) => runs.set(r.name, [...(runs.get(r.name) ?? []), r]);
      for (let round = 0; round < ROUNDS; round++) {
        if (SCENARIOS.includes("sqlite")) add(await runBaseline("sqlite", c, fresh(baseTpl, `sqlite-${c}`)));
        if (SCENARIOS.includes("core")) add(await runCore("Core, event log off", c, fresh(coreTpl, `core-${c}`), false));
        if (SCENARIOS.includes("core-log")) add(await runCore("Core, event log on (to a file)", c, fresh(coreTpl, `core-log-${c}`), true));
        if (SCENARIOS.includes("core-single")) add(await runCore("Core, log off, no writer thread", c, fresh(coreTpl, `core-single-${c}`), false, { HONEYBEE_INGEST_WORKER: "false" }));
      }
      for (const scenario of runs.values()) results.push(median(scenario));
    }
    if (SCENARIOS.includes("stall")) results.push(await runStall(8, fresh(coreTpl, "stall")));

    const baseline = (c: number) => results.find((r) => r.name.startsWith("(b)") && r.connections === c)?.rate;
    const rows = results.map((r) => {
      const b = baseline(r.connections);
      const rate = r.range ? `${Math.round(r.rate).toLocaleString("en-US")} (${Math.round(r.range[0]).toLocaleString("en-US")}-${Math.round(r.range[1]).toLocaleString("en-US")})` : Math.round(r.rate);
      return [r.name, r.connections, rate, r.p50 === null ? "n/a" : r.p50.toFixed(1), r.p99 === null ? "n/a" : r.p99.toFixed(1), r.rssMb ?? "n/a", b ? `${(r.rate / b).toFixed(2)}x` : "n/a", r.note ?? ""];
    });
    t = performance.now();
    return [
      `Ingest: ${EVENTS.toLocaleString("en-US")} events per scenario; ${setup}; latency = send to EventAck (commit), ms; ` +
        `${ROUNDS > 1 ? `median of ${ROUNDS} interleaved runs (range in brackets), vs (b) = median / median of (b)` : "one run each"}.`,
      "",
      table(["scenario", "connections", "committed events/s", "p50 ms", "p99 ms", "peak RSS MB", "vs (b)", "note"], rows),
    ].join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await main());
