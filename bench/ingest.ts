/**
 * Ingest bench: a producer process sends realistic events (bench/ingest-events.ts) in each
 * shape Core accepts over 1 and over 8 connections, on a database that already holds millions
 * of rows, and reports committed events/s end to end, p50/p99 send-to-commit latency (from
 * EventAck), peak RSS and the server's CPU per event. Shapes: flat native lines, PotEvent
 * envelopes and PotLog envelopes on the event socket, and PotLog on the control channel from
 * Go-node-like producers (each connection a node that registers first). For flat lines also:
 * Core with the event log on, single-threaded, with GeoIP/ASN enrichment off (its end-to-end
 * price), and with the writer stalled; and the enrichment's own cost per event
 * (bench/ingest-geo.ts). Next to three
 * baselines measured in the same run, fed by the same producer:
 *   (a) parse and discard;
 *   (b) the minimal single-process parse + raw bun:sqlite insert per row, 4096 rows per
 *       transaction (4 KiB pages);
 *   (b+) the tuned simple design: Core's pragmas and 16 KiB pages, Core's batching, 32 rows
 *       per INSERT, the writer (and WAL checkpoints) in threads of their own, no summaries or
 *       counters (bench/ingest-tuned-fixture.ts). Core's time per event less (b+)'s is the
 *       price of Core's extra work, printed per event at the end.
 * After each Core run the bench asks Core how many events it committed: a shape Core refused
 * is marked NOT VALID instead of passing for a fast one.
 *
 *   bun bench/ingest.ts                     # full run (2M events, 3M rows already present)
 *   BENCH_EVENTS=200000 BENCH_PREFILL=500000 bun bench/ingest.ts   # quick run
 *
 * Each scenario runs BENCH_ROUNDS times (default 3), the rounds interleaved (every shape and
 * scenario: b, b+, Core, Core with log, ..., then all again), and the table shows the median
 * run with the range: on a shared machine one run of the same build varies by ±20%. A second
 * table compares each envelope shape's CPU per event with flat lines' from the same round.
 *
 * Every server, baselines and Core alike, first takes BENCH_WARMUP events (other sessions and
 * addresses than the measured ones) from a producer of its own, and is measured only from the
 * second producer on: a server runs for weeks, so what it costs per event is its cost once
 * its code is compiled. Core has far more code than the baselines, and in a cold 2M-event run
 * its JIT compiler thread took ~0.9 µs per event (its FTL compiles of the writer's counting
 * alone ~0.2 s each) against the baselines' ~0.1. Functions that run once per batch or per
 * counter flush get hot slowly: after a 1M-event warm-up JavaScriptCore still spent 0.82 s
 * compiling Core's code during the measured 2M events (the writer's counting 0.21 s, the
 * counters' `add` 0.1 s, the line splitter 0.05 s; BUN_JSC_reportCompileTimes=true), the
 * JIT threads 0.14-0.31 µs per event, the baselines' under 0.05; after 3M events, 0.16 s:
 * hence the default.
 * BENCH_WARMUP=0 measures cold servers.
 *
 * Env: BENCH_EVENTS (2000000), BENCH_WARMUP (3000000), BENCH_PREFILL (3000000), BENCH_SHAPES
 * (comma list of: flat, potevent, potlog, potlog-control; default all), BENCH_SCENARIOS (comma
 * list of: discard, sqlite, tuned, tuned-alloc, core, core-nogeo, core-log, core-single, stall,
 * geo; default all; tuned-alloc is (b+) started with bin/honeybee's allocator setting, see
 * LAUNCHER_ENV in lib.ts), BENCH_CONNECTIONS (default "1,8"), BENCH_STALL_MS (3000),
 * BENCH_ROUNDS (3), BENCH_SESSIONS ("live": events come from ~7.8-event Cowrie sessions, 200
 * open at once; "single": every event a session of its own, the session writer's worst
 * case), BENCH_CORE_FLAGS (Bun's flags for Core's process, e.g.
 * "--cpu-prof-md --cpu-prof-dir=<dir>": a profile of its main thread when it stops),
 * BENCH_RUN_TIMEOUT (seconds for one server's warm-up and run, default the larger of 300 and
 * one per 5,000 events: a round that takes longer is killed and reported as hung).
 */
import { sqliteEventWriting } from "../src/db/writer-channel";
import { Database } from "bun:sqlite";
import { copyFileSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { defaultCoreConfig } from "../src/config";
import { openDatabase } from "../src/db";
import { MessageBus } from "../src/core/bus";
import { createIngest } from "../src/core/ingest";
import { parseEventLine } from "../src/core/ingest/parse";
import { silentLogger } from "../src/log";
import { SHAPES as ALL_SHAPES, eventLines, type Shape } from "./ingest-events";
import { main as geoCost } from "./ingest-geo";
import { BUN, LAUNCHER_ENV, ROOT, benchDir, lineReader, table } from "./lib";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 2_000_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3_000_000);
/** The warm-up's producer seed: its sessions and addresses are not the measured run's. */
const WARMUP_SEED = 8;
const PREFILL = Number(process.env.BENCH_PREFILL ?? 3_000_000);
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? "discard,sqlite,tuned,tuned-alloc,core,core-nogeo,core-log,core-single,stall,geo").split(",");
const SHAPES = (process.env.BENCH_SHAPES ?? ALL_SHAPES.join(",")).split(",") as Shape[];
for (const s of SHAPES) if (!ALL_SHAPES.includes(s)) throw new Error(`BENCH_SHAPES: unknown shape ${s} (known: ${ALL_SHAPES.join(", ")})`);
const CONNECTIONS = (process.env.BENCH_CONNECTIONS ?? "1,8").split(",").map(Number);
const STALL_MS = Number(process.env.BENCH_STALL_MS ?? 3000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const DAY_MS = 86_400_000;
/** Bun's own flags for Core's process, e.g. "--cpu-prof-md --cpu-prof-dir=/some/dir" to profile where its main thread spends. */
const CORE_FLAGS = (process.env.BENCH_CORE_FLAGS ?? "").split(" ").filter(Boolean);
const CORE = "Core, event log off";

interface Result {
  name: string;
  shape: Shape;
  connections: number;
  rate: number;
  p50: number | null;
  p99: number | null;
  rssMb: number | null;
  /** The server's CPU time per event, µs, all its threads. */
  cpuUs: number | null;
  note?: string;
  /** Core did not commit every event (a refused shape): the rate means nothing. */
  invalid?: boolean;
  /** Slowest and fastest run, when there were several. */
  range?: [number, number];
  /** No result within BENCH_RUN_TIMEOUT: its processes were killed (see `guarded`). */
  hung?: boolean;
}

/**
 * The median run of a scenario (by rate), with the range of all its runs, the median CPU per
 * event and the largest peak RSS; invalid if any run was. Rounds that hung are left out and
 * counted in the note.
 */
function median(all: Result[]): Result {
  const runs = all.filter((r) => !r.hung);
  if (runs.length === 0) return all[0]!;
  const hung = all.length - runs.length;
  const sorted = [...runs].sort((a, b) => a.rate - b.rate);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
  const rss = runs.map((r) => r.rssMb).filter((r): r is number => r !== null);
  const cpu = runs.map((r) => r.cpuUs).filter((r): r is number => r !== null).sort((a, b) => a - b);
  const invalid = runs.find((r) => r.invalid);
  return {
    ...mid,
    rssMb: rss.length ? Math.max(...rss) : null,
    cpuUs: cpu.length ? cpu[Math.floor((cpu.length - 1) / 2)]! : null,
    range: runs.length > 1 ? [sorted[0]!.rate, sorted.at(-1)!.rate] : undefined,
    ...(invalid ? { invalid: true, note: invalid.note } : {}),
    ...(hung ? { note: `${hung} of ${all.length} rounds hung and were left out; ${invalid?.note ?? mid.note ?? ""}` } : {}),
  };
}

/**
 * A run of a server that never finishes (seen with (b+)'s fixture, rarely: every process idle,
 * its producer waiting for a socket to drain; the fixture now says on stderr where it stands
 * when it stalls) must not stop the whole bench: after BENCH_RUN_TIMEOUT seconds its
 * processes are killed and the round is reported as hung.
 */
const RUN_TIMEOUT_S = Number(process.env.BENCH_RUN_TIMEOUT ?? Math.max(300, (WARMUP + EVENTS) / 5000));
/** The processes of the run under way. */
const live = new Set<Bun.Subprocess>();

function track<P extends Bun.Subprocess>(proc: P): P {
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  return proc;
}

async function guarded(name: string, shape: Shape, connections: number, run: () => Promise<Result>): Promise<Result> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Result>((resolve) => {
    timer = setTimeout(() => {
      for (const p of live) p.kill("SIGKILL");
      const note = `HUNG: no result after ${RUN_TIMEOUT_S} s; its processes were killed`;
      console.error(`bench ingest: ${name}, ${shape}, ${connections} connections: ${note}`);
      resolve({ name, shape, connections, rate: Number.NaN, p50: null, p99: null, rssMb: null, cpuUs: null, note, invalid: true, hung: true });
    }, RUN_TIMEOUT_S * 1000);
  });
  const running = run();
  // Once killed, the run fails on its own: that failure is the hang already reported.
  running.catch(() => {});
  try {
    return await Promise.race([running, hung]);
  } finally {
    clearTimeout(timer);
  }
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
  const others = spent.filter((t) => t.tid !== pid && t.name !== "Worker");
  const rest = others.reduce((n, t) => n + t.ticks, 0);
  // The rest by thread name (JSC's JIT compiler threads, its collector's helpers, ...), the larger ones.
  const byName = new Map<string, number>();
  for (const t of others) byName.set(t.name, (byName.get(t.name) ?? 0) + t.ticks);
  const named = [...byName].filter(([, ticks]) => (ticks * 10_000) / EVENTS >= 0.05).sort((a, b) => b[1] - a[1]);
  const parts = [`receive ${us(main)}`];
  if (workers[0]) parts.push(`writer ${us(workers[0].ticks)}`);
  if (workers[1]) parts.push(`checkpoint ${us(workers[1].ticks)}`);
  parts.push(`other ${us(rest)}${named.length ? ` (${named.map(([name, ticks]) => `${name} ${us(ticks)}`).join(", ")})` : ""}`);
  return `CPU µs/event: ${parts.join(", ")}`;
}

async function produce(port: number, connections: number, acks: boolean, shape: Shape, markerPort?: number, events = EVENTS, seed = 7) {
  // One event per millisecond up to now: Core stores times over 5 minutes ahead at their receive time, by the general path.
  const proc = track(Bun.spawn([BUN, join(import.meta.dir, "ingest-producer-fixture.ts"), JSON.stringify({ port, events, connections, seed, baseMs: Date.now() - events, acks, shape, markerPort })], {
    stdout: "pipe",
    stderr: "inherit",
  }));
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(out.trim().split("\n").pop()!) as { start: number; end: number; p50: number | null; p99: number | null };
}

/** CPU time so far of a whole process (Linux; every thread, also those that ended), in µs. */
function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10_000; // a tick is 10 ms
  } catch {
    return null;
  }
}

/** Fills a Core database with `PREFILL` events through the real pipeline (inline writer). */
async function coreTemplate(path: string): Promise<void> {
  const config = defaultCoreConfig({ db: path, ingest_worker: false, log_events: false, batch_size: 16_384 });
  const db = openDatabase(path);
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const make = eventLines(1, Date.now() - 2 * DAY_MS);
  for (let i = 0; i < PREFILL; i++) {
    ingest.submit(parseEventLine(make(i)), { transport: "events", remote: "prefill" });
    if (i % 50_000 === 49_999) await ingest.flush();
  }
  await ingest.stop();
  db.$client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.$client.close();
}

/** `rows` prefilled events in the baselines' table: no secondary index, the line as data; (b+) has Core's page size. */
export function baselineTemplate(path: string, pageSize: number, rows = PREFILL): void {
  const db = new Database(path, { create: true, strict: true });
  db.exec(`PRAGMA page_size = ${pageSize}; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL`);
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
  for (let i = 0; i < rows; i += 50_000) fill(i, Math.min(rows, i + 50_000));
  db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
}

const BASELINES = {
  discard: "(a) parse and discard",
  sqlite: "(b) single process, raw bun:sqlite",
  tuned: "(b+) tuned: Core's pragmas, pages, batches, 32-row INSERTs, writer thread",
  "tuned-alloc": "(b+) with Core's allocator setting (bin/honeybee)",
} as const;

async function runBaseline(mode: keyof typeof BASELINES, shape: Shape, connections: number, dbPath: string): Promise<Result> {
  // A done line after the warm-up's events, and one after the measured run's.
  const expected = WARMUP > 0 ? `${WARMUP},${WARMUP + EVENTS}` : String(EVENTS);
  const tuned = mode === "tuned" || mode === "tuned-alloc";
  const args = tuned ? [join(import.meta.dir, "ingest-tuned-fixture.ts"), expected, dbPath] : [join(import.meta.dir, "ingest-baseline-fixture.ts"), mode, expected, dbPath];
  // (b+) as the issue defines it runs with Bun's defaults; "tuned-alloc" shows what Core's launcher setting alone is worth to it.
  const env = mode === "tuned-alloc" ? { ...process.env, ...LAUNCHER_ENV } : process.env;
  const server = track(Bun.spawn([BUN, ...args], { stdout: "pipe", stderr: "inherit", env }));
  const lines = lineReader(server.stdout);
  const ready = JSON.parse(await lines.next());
  if (WARMUP > 0) {
    await produce(ready.port, connections, false, shape, undefined, WARMUP, WARMUP_SEED);
    ready.cpu = JSON.parse(await lines.next()).cpu;
  }
  const before = threadTicks(server.pid);
  const producer = produce(ready.port, connections, false, shape);
  const { done, cpu } = JSON.parse(await lines.next());
  const note = tuned ? cpuNote(server.pid, before, threadTicks(server.pid)) : undefined;
  const p = await producer;
  const rssMb = peakRssMb(server.pid);
  server.kill();
  await server.exited;
  return { name: BASELINES[mode], shape, connections, rate: EVENTS / ((done - p.start) / 1000), p50: null, p99: null, rssMb, cpuUs: (cpu - ready.cpu) / EVENTS, note };
}

/** Core's own count of what the run stored: a shape Core refused must not pass for a fast one. */
async function checkCommitted(apiPort: number, expected: number): Promise<string | null> {
  const stats = (await (await fetch(`http://127.0.0.1:${apiPort}/api/v1/stats?window=1h&top=1`)).json()) as { ingest: { committed: number; rejected: number } };
  const { committed, rejected } = stats.ingest;
  return committed === expected && rejected === 0 ? null : `NOT VALID: Core committed ${committed} of ${expected} events, rejected ${rejected}`;
}

async function runCore(name: string, shape: Shape, connections: number, dbPath: string, logEvents: boolean, env: Record<string, string> = {}): Promise<Result> {
  const logPath = dbPath + ".log";
  const proc = track(Bun.spawn(
    [BUN, ...CORE_FLAGS, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", dbPath, "--log-level", "info", "--log-events", String(logEvents)],
    // Logs go to a file, as in production; a pipe would make this process a second consumer of CPU.
    { stdout: Bun.file(logPath), stderr: "inherit", env: { ...process.env, ...LAUNCHER_ENV, HONEYBEE_API_RATE_PER_MINUTE: "0", ...env } },
  ));
  let ports: { node: number; event: number; api: number } | null = null;
  while (!ports) {
    await Bun.sleep(50);
    const started = readFileSync(logPath, "utf8").split("\n").find((l) => l.includes('"core started"'));
    if (started) ports = JSON.parse(started).ports;
    if (proc.exitCode !== null) throw new Error(`core exited: ${readFileSync(logPath, "utf8")}`);
  }
  const control = shape === "potlog-control";
  if (WARMUP > 0) {
    if (control) await produce(ports.node, connections, false, shape, ports.event, WARMUP, WARMUP_SEED);
    else await produce(ports.event, connections, true, shape, undefined, WARMUP, WARMUP_SEED);
  }
  const before = threadTicks(proc.pid);
  const cpuBefore = processCpuUs(proc.pid);
  const p = control ? await produce(ports.node, connections, false, shape, ports.event) : await produce(ports.event, connections, true, shape);
  const cpuAfter = processCpuUs(proc.pid);
  const note = cpuNote(proc.pid, before, threadTicks(proc.pid));
  const rssMb = peakRssMb(proc.pid);
  // The control channel's runs (warm-up and measured) each end with one marker event on the event socket.
  const invalid = await checkCommitted(ports.api, WARMUP + EVENTS + (control ? (WARMUP > 0 ? 2 : 1) : 0));
  proc.kill("SIGTERM");
  await proc.exited;
  const cpuUs = cpuBefore !== null && cpuAfter !== null ? (cpuAfter - cpuBefore) / EVENTS : null;
  return { name, shape, connections, rate: EVENTS / ((p.end - p.start) / 1000), p50: p.p50, p99: p.p99, rssMb, cpuUs, note: invalid ?? note, invalid: invalid !== null };
}

async function runStall(connections: number, dbPath: string): Promise<Result> {
  const server = Bun.spawn([BUN, join(import.meta.dir, "ingest-stall-fixture.ts"), dbPath, String(EVENTS)], { stdin: "pipe", stdout: "pipe", stderr: "inherit", env: { ...process.env, ...LAUNCHER_ENV } });
  const lines = lineReader(server.stdout);
  const { port } = JSON.parse(await lines.next());
  const producer = produce(port, connections, true, "flat");
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
    shape: "flat",
    connections,
    rate: EVENTS / ((p.end - p.start) / 1000),
    p50: p.p50,
    p99: p.p99,
    rssMb,
    cpuUs: null,
    note: `peak RSS while stalled ${stalledRss} MB; at most ${max_pending.toLocaleString("en-US")} events pending`,
  };
}

export async function main(): Promise<string> {
  const dir = benchDir();
  try {
    const coreTpl = join(dir, "core-template.db");
    const baseTpl = join(dir, "baseline-template.db");
    const tunedTpl = join(dir, "tuned-template.db");
    let t = performance.now();
    await coreTemplate(coreTpl);
    baselineTemplate(baseTpl, 4096);
    if (SCENARIOS.includes("tuned") || SCENARIOS.includes("tuned-alloc")) baselineTemplate(tunedTpl, 16_384);
    const setup = `prefilled ${PREFILL.toLocaleString("en-US")} rows in each database in ${((performance.now() - t) / 1000).toFixed(0)} s`;
    const fresh = (tpl: string, name: string) => {
      const path = join(dir, `${name}.db`);
      for (const s of ["", "-wal", "-shm", ".log"]) rmSync(path + s, { force: true });
      copyFileSync(tpl, path);
      return path;
    };

    // Rounds outermost, every shape within each: a round's shapes run minutes apart, not a
    // whole bench apart, so comparing shapes (envelopes against flat lines) is fair on a
    // machine whose speed drifts over an hour.
    const runs = new Map<string, Result[]>();
    const add = (r: Result) => {
      const key = `${r.shape}/${r.connections}/${r.name}`;
      runs.set(key, [...(runs.get(key) ?? []), r]);
    };
    /** Core's CPU per event by round, shape and connections, for the envelope table. */
    const coreCpu: Map<string, number>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const cpu = new Map<string, number>();
      coreCpu.push(cpu);
      for (const shape of SHAPES) {
        // The event log, the single thread and the stalled writer are questions about Core, not about shapes.
        const only = (scenario: string) => SCENARIOS.includes(scenario) && shape === "flat";
        for (const c of CONNECTIONS) {
          if (round === 0 && SCENARIOS.includes("discard")) add(await runBaseline("discard", shape, c, ""));
          const baseline = (mode: "sqlite" | "tuned" | "tuned-alloc", tpl: string) => guarded(BASELINES[mode], shape, c, () => runBaseline(mode, shape, c, fresh(tpl, `${mode}-${c}`)));
          const core = (name: string, file: string, logEvents: boolean, env?: Record<string, string>) =>
            guarded(name, shape, c, () => runCore(name, shape, c, fresh(coreTpl, `${file}-${c}`), logEvents, env));
          if (SCENARIOS.includes("sqlite")) add(await baseline("sqlite", baseTpl));
          if (SCENARIOS.includes("tuned")) add(await baseline("tuned", tunedTpl));
          if (SCENARIOS.includes("tuned-alloc")) add(await baseline("tuned-alloc", tunedTpl));
          if (SCENARIOS.includes("core")) {
            const r = await core(CORE, "core", false);
            add(r);
            if (r.cpuUs !== null && !r.invalid && !r.hung) cpu.set(`${shape}/${c}`, r.cpuUs);
          }
          if (only("core-nogeo")) add(await core("Core, log off, enrichment off", "core-nogeo", false, { HONEYBEE_GEO_ENRICHMENT: "false" }));
          if (only("core-log")) add(await core("Core, event log on (to a file)", "core-log", true));
          if (only("core-single")) add(await core("Core, log off, no writer thread", "core-single", false, { HONEYBEE_INGEST_WORKER: "false" }));
        }
        if (round === 0 && only("stall")) add(await runStall(8, fresh(coreTpl, "stall")));
      }
    }
    // Rows in the order of the first round: by shape, connections, scenario.
    const results = [...runs.values()].map(median);
    // Each envelope shape's CPU per event over flat lines' in the same round.
    const signed = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(0)}%`;
    const envelopes = SHAPES.filter((s) => s !== "flat").flatMap((shape) =>
      CONNECTIONS.flatMap((c) => {
        const pct = coreCpu
          .map((cpu) => [cpu.get(`${shape}/${c}`), cpu.get(`flat/${c}`)])
          .filter((p): p is [number, number] => p[0] !== undefined && p[1] !== undefined)
          .map(([e, f]) => (e / f - 1) * 100);
        return pct.length ? [[shape, c, pct.map(signed).join(", ")]] : [];
      }),
    );

    const find = (name: string, r: Result) => results.find((x) => x.name === name && x.shape === r.shape && x.connections === r.connections && !x.invalid);
    const ratio = (r: Result, base: Result | undefined) => (base && !r.invalid ? `${(r.rate / base.rate).toFixed(2)}x` : "n/a");
    const num = (n: number) => Math.round(n).toLocaleString("en-US");
    const rows = results.map((r) => {
      const rate = r.range ? `${num(r.rate)} (${num(r.range[0])}-${num(r.range[1])})` : num(r.rate);
      return [
        r.shape,
        r.name,
        r.connections,
        r.invalid ? `(${rate})` : rate,
        r.p50 === null ? "n/a" : r.p50.toFixed(1),
        r.p99 === null ? "n/a" : r.p99.toFixed(1),
        r.rssMb ?? "n/a",
        r.cpuUs === null ? "n/a" : r.cpuUs.toFixed(2),
        ratio(r, find(BASELINES.sqlite, r)),
        ratio(r, find(BASELINES.tuned, r)),
        ratio(r, find(BASELINES["tuned-alloc"], r)),
        r.note ?? "",
      ];
    });
    // The price of Core's extra work (dictionaries, segment summaries, counters, acks, feed):
    // per event, Core's time and CPU less the tuned baseline's, from the medians of the same run.
    const gaps = results
      .filter((r) => r.name === CORE && !r.invalid)
      .flatMap((core) => {
        const tuned = find(BASELINES.tuned, core);
        if (!tuned) return [];
        const us = (rate: number) => 1e6 / rate;
        const cpu = core.cpuUs !== null && tuned.cpuUs !== null ? [core.cpuUs.toFixed(2), tuned.cpuUs.toFixed(2), (core.cpuUs - tuned.cpuUs).toFixed(2)] : ["n/a", "n/a", "n/a"];
        return [[core.shape, core.connections, us(core.rate).toFixed(2), us(tuned.rate).toFixed(2), (us(core.rate) - us(tuned.rate)).toFixed(2), ...cpu]];
      });
    t = performance.now();
    const out = [
      `Ingest: ${EVENTS.toLocaleString("en-US")} events per scenario, measured after ${WARMUP.toLocaleString("en-US")} warm-up events; ${setup}; latency = send to EventAck (commit), ms (none on the control channel); ` +
        `CPU = the server process's CPU time per event, all threads; ` +
        `${ROUNDS > 1 ? `median of ${ROUNDS} interleaved runs (range in brackets), vs (b)/(b+) = median / median of that baseline, same shape and connections` : "one run each"}.`,
      "",
      table(["shape", "scenario", "connections", "committed events/s", "p50 ms", "p99 ms", "peak RSS MB", "CPU µs/event", "vs (b)", "vs (b+)", "vs (b+ alloc)", "note"], rows),
    ];
    if (gaps.length) {
      out.push(
        "",
        "The price of Core's extra work over (b+), per event (wall = 1 / rate; positive: Core spends more):",
        "",
        table(["shape", "connections", "Core µs/event", "(b+) µs/event", "gap µs/event", "Core CPU µs/event", "(b+) CPU µs/event", "gap CPU µs/event"], gaps),
      );
    }
    if (envelopes.length) {
      out.push(
        "",
        "Envelopes against flat lines: Core's CPU per event over its CPU per event for flat lines at the same connections in the same round (goal: within 15%), one figure per round:",
        "",
        table(["shape", "connections", "Core CPU per event over flat lines'"], envelopes),
      );
    }
    if (SCENARIOS.includes("geo")) out.push("", await geoCost());
    return out.join("\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await main());
