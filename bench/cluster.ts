/**
 * `bun run bench cluster`: Core as a cluster (docs/scale-out.md) on the machine's PostgreSQL
 * and NATS, real `honeybee core` processes (tests/cluster/processes.ts), in one run:
 *
 * 1. events/s committed to PostgreSQL (rows counted in `events` until all are there) with 1 and
 *    2 ingest instances and 1 and 2 writers, each role its own process; one full-speed producer
 *    process per ingest instance (bench/ingest-producer-fixture.ts, acks on), next to the naive
 *    baseline of bench/pg.ts measured in the same run (one process, one INSERT per event; at
 *    the start and at the end, the better of the two kept);
 * 2. CPU per event of each role: user + system time of its processes from /proc/<pid>/stat,
 *    and of the PostgreSQL backends serving the run's database (when the server is local);
 * 3. writer lag under overload: 1 ingest + 1 writer fed at twice the committed rate of step 1
 *    for a while (bench/cluster-paced-producer.ts), the writers' consumer's pending messages
 *    (num_pending + num_ack_pending) sampled every 0.5 s: the peak and the time to drain;
 * 4. feed latency across instances: 3 instances with every role, WebSocket subscribers on B and
 *    C (`?kinds=PotEvent`, bench/feed-subscriber-fixture.ts), events sent to A at a steady rate
 *    with their send time inside; latency = receive time − send time.
 *
 * Every deployment has a fresh database and a cluster name of its own, whose streams are
 * deleted afterwards.
 *
 * Env: BENCH_CLUSTER_EVENTS (200000) events per throughput configuration; BENCH_CLUSTER_NAIVE
 * (3000) events of the naive baseline; BENCH_CLUSTER_CONNECTIONS (2) per producer;
 * BENCH_CLUSTER_OVERLOAD_S (10); BENCH_CLUSTER_FEED_RATE (2000) events/s and
 * BENCH_CLUSTER_FEED_S (10); BENCH_CLUSTER_SUBSCRIBERS (100); BENCH_CLUSTER_FEED_ROLES (the roles
 * of A;B;C, every role for each by default); BENCH_CLUSTER_PARTS (throughput,overload,feed; the
 * overload without throughput needs BENCH_CLUSTER_OVERLOAD_RATE, its asked rate); NATS_URL
 * (nats://127.0.0.1:4222); PG_ADMIN_URL (postgres://postgres@127.0.0.1:5432/postgres).
 */
import { SQL } from "bun";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { ClusterNames } from "../src/cluster/names";
import { clusterName, dropCluster, NATS_URL, sharedDatabase } from "../tests/cluster/helpers";
import { spawnCore, type CoreProcess } from "../tests/cluster/processes";
import { closeTestDatabases } from "../tests/helpers/postgres";
import { BUN, cpuSeconds, lineReader, table } from "./lib";
import { batches, naive } from "./pg";

const N = Number(process.env.BENCH_CLUSTER_EVENTS ?? 200_000);
const NAIVE_N = Number(process.env.BENCH_CLUSTER_NAIVE ?? 3000);
const CONNECTIONS = Number(process.env.BENCH_CLUSTER_CONNECTIONS ?? 2);
const OVERLOAD_S = Number(process.env.BENCH_CLUSTER_OVERLOAD_S ?? 10);
const FEED_RATE = Number(process.env.BENCH_CLUSTER_FEED_RATE ?? 2000);
const FEED_S = Number(process.env.BENCH_CLUSTER_FEED_S ?? 10);
const SUBSCRIBERS = Number(process.env.BENCH_CLUSTER_SUBSCRIBERS ?? 100);
const ALL_ROLES = "ingest,api,proxy,writer";
const PARTS = (process.env.BENCH_CLUSTER_PARTS ?? "throughput,overload,feed").split(",");
// Without the throughput part, the overload's "one writer's rate" must be given.
const OVERLOAD_RATE = Number(process.env.BENCH_CLUSTER_OVERLOAD_RATE ?? 0) / 2;
// The feed's instances A, B and C: every role by default; e.g. "ingest,api,proxy,writer;api,proxy;api,proxy" for one writer.
const FEED_ROLES = (process.env.BENCH_CLUSTER_FEED_ROLES ?? `${ALL_ROLES};${ALL_ROLES};${ALL_ROLES}`).split(";");
// Producers of one run must not send the same events: the writers would store them once.
const PRODUCER_SPAN_MS = 1e9;

interface Deployment {
  cluster: string;
  names: ClusterNames;
  db: { url: string };
  procs: { roles: string; core: CoreProcess }[];
  /** Rows in `events` now. */
  rows(): Promise<number>;
  /** Process ids of the PostgreSQL backends serving the instances (the bench's own excluded). */
  backends(): Promise<number[]>;
  stop(): Promise<void>;
}

async function deploy(roles: string[]): Promise<Deployment> {
  const cluster = clusterName();
  const db = await sharedDatabase();
  const sql = new SQL(db.url, { max: 1 });
  // Counting rows in parallel workers would put the bench's own work among the backends' CPU.
  await sql`set max_parallel_workers_per_gather = 0`;
  const procs: Deployment["procs"] = [];
  const stop = async () => {
    await Promise.all(procs.map((p) => p.core.kill("SIGTERM").catch(() => {})));
    await sql.close();
    await dropCluster(cluster).catch(() => {});
    await db.drop();
  };
  try {
    // One after another: instances starting together on two cores make every start slow.
    for (const r of roles) procs.push({ roles: r, core: await spawnCore({ db: db.url, bus: NATS_URL, cluster, roles: r }) });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    cluster,
    names: new ClusterNames(cluster),
    db,
    procs,
    rows: async () => Number((await sql`select count(*)::int as n from events`)[0].n),
    backends: async () => (await sql`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`).map((r: any) => Number(r.pid)),
    stop,
  };
}

/** Polls the row count until `n` rows are there; resolves with the time (Date.now()) it saw them. */
async function untilRows(d: Deployment, n: number, timeoutMs = 300_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await d.rows();
    if (rows >= n) {
      if (rows > n) throw new Error(`${rows} rows stored for ${n} events`);
      return Date.now();
    }
    if (Date.now() > deadline) throw new Error(`only ${rows} of ${n} events stored after ${timeoutMs / 1000} s`);
    await Bun.sleep(100);
  }
}

/** One full-speed producer process (acks on) against one ingest instance. */
async function produce(port: number, events: number, k: number, baseMs: number) {
  const args = { port, events, connections: CONNECTIONS, seed: 7 + k, baseMs: baseMs + k * PRODUCER_SPAN_MS, acks: true, shape: "flat" };
  const proc = Bun.spawn([BUN, join(import.meta.dir, "ingest-producer-fixture.ts"), JSON.stringify(args)], { stdout: "pipe", stderr: "inherit" });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`producer failed: ${out}`);
  return JSON.parse(out.trim().split("\n").pop()!) as { start: number; end: number; p50: number | null; p99: number | null };
}

function paced(port: number, rate: number, seconds: number, sentAt: boolean, seed = 11) {
  const args = { port, rate, seconds, seed, baseMs: Date.now() - 3_600_000, sentAt };
  const proc = Bun.spawn([BUN, join(import.meta.dir, "cluster-paced-producer.ts"), JSON.stringify(args)], { stdout: "pipe", stderr: "inherit" });
  return (async () => {
    const out = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error(`paced producer failed: ${out}`);
    return JSON.parse(out.trim().split("\n").pop()!) as { sent: number; start: number; sendEnd: number; end: number };
  })();
}

interface Throughput {
  name: string;
  acked: number;
  committed: number;
  p99: number | null;
  cpuIngest: number;
  cpuWriter: number;
  /** PostgreSQL backends of the run's database, µs per event; null where /proc cannot tell (a server elsewhere). */
  cpuPg: number | null;
}

/** CPU seconds of each process that can be read (a PostgreSQL elsewhere cannot). */
function cpuOfPids(pids: number[]): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      out.set(pid, cpuSeconds(pid));
    } catch {
      // Gone, or not on this machine.
    }
  }
  return out;
}

/** Step 1 and 2: `ingest` ingest processes and `writers` writer processes, N events. */
async function throughput(ingest: number, writers: number): Promise<Throughput> {
  const d = await deploy([...Array(ingest).fill("ingest"), ...Array(writers).fill("writer")]);
  try {
    const cpu0 = d.procs.map((p) => cpuSeconds(p.core.proc.pid));
    const pg0 = cpuOfPids(await d.backends());
    const per = Math.ceil(N / ingest);
    // Every producer's span in the past: Core stores times over 5 minutes ahead at their receive time.
    const base = Date.now() - ingest * PRODUCER_SPAN_MS;
    const ingests = d.procs.filter((p) => p.roles === "ingest");
    const results = await Promise.all(ingests.map((p, k) => produce(p.core.ports.event, Math.min(per, N - k * per), k, base)));
    const committedAt = await untilRows(d, N);
    const cpu = d.procs.map((p, i) => cpuSeconds(p.core.proc.pid) - cpu0[i]!);
    // Backends that connected during the run count from zero.
    const pg1 = cpuOfPids(await d.backends());
    const pgCpu = [...pg1].reduce((s, [pid, t]) => s + t - (pg0.get(pid) ?? 0), 0);
    const start = Math.min(...results.map((r) => r.start));
    const ackedAt = Math.max(...results.map((r) => r.end));
    const cpuOf = (role: string) => (d.procs.reduce((s, p, i) => s + (p.roles === role ? cpu[i]! : 0), 0) * 1e6) / N;
    return {
      name: `${ingest} ingest + ${writers} writer${writers > 1 ? "s" : ""}`,
      acked: N / ((ackedAt - start) / 1000),
      committed: N / ((committedAt - start) / 1000),
      p99: Math.max(...results.map((r) => r.p99 ?? 0)),
      cpuIngest: cpuOf("ingest"),
      cpuWriter: cpuOf("writer"),
      cpuPg: pg1.size ? (pgCpu * 1e6) / N : null,
    };
  } finally {
    await d.stop();
  }
}

/** Step 3: 1 ingest + 1 writer fed at `rate` for OVERLOAD_S seconds; the consumer's backlog every 0.5 s. */
async function overload(rate: number) {
  const d = await deploy(["ingest", "writer"]);
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await jetstreamManager(nc);
    const { eventStream, writerConsumer } = d.names;
    const total = Math.round(rate * OVERLOAD_S);
    const samples: { t: number; pending: number; rows: number }[] = [];
    let producerDone: { sent: number; start: number; sendEnd: number; end: number } | null = null;
    const producer = paced(d.procs[0]!.core.ports.event, rate, OVERLOAD_S, false).then((r) => (producerDone = r));
    const t0 = Date.now();
    const deadline = t0 + (OVERLOAD_S + 300) * 1000;
    for (;;) {
      const info = await jsm.consumers.info(eventStream, writerConsumer).catch(() => null);
      const pending = info ? info.num_pending + info.num_ack_pending : 0;
      const rows = await d.rows();
      samples.push({ t: Date.now(), pending, rows });
      if (producerDone && pending === 0 && rows >= total) break;
      if (Date.now() > deadline) throw new Error(`overload: ${rows} of ${total} stored, ${pending} messages pending after ${(Date.now() - t0) / 1000} s`);
      await Bun.sleep(500);
    }
    const p = (await producer) as { sent: number; start: number; sendEnd: number; end: number };
    const stream = await jsm.streams.info(eventStream);
    const drained = samples.find((s) => s.t >= p.sendEnd && s.pending === 0 && s.rows >= total)!.t;
    // Events offered but not yet committed at a sample: what the writer is behind by.
    const behind = samples.map((s) => Math.min(total, Math.round(((s.t - p.start) / 1000) * rate)) - s.rows);
    return {
      rate,
      total,
      offered: total / ((p.sendEnd - p.start) / 1000),
      acked: total / ((p.end - p.start) / 1000),
      peakPending: Math.max(...samples.map((s) => s.pending)),
      peakBehind: Math.max(...behind),
      drainS: (drained - p.sendEnd) / 1000,
      perMessage: total / stream.state.last_seq,
    };
  } finally {
    await nc.close();
    await d.stop();
  }
}

/** Step 4: A, B and C with every role; subscribers on B and C, events to A at FEED_RATE. */
async function feed() {
  if (FEED_ROLES.length !== 3) throw new Error("BENCH_CLUSTER_FEED_ROLES: three role lists (A;B;C)");
  const d = await deploy(FEED_ROLES);
  const [a, b, c] = d.procs.map((p) => p.core) as [CoreProcess, CoreProcess, CoreProcess];
  const subs: { proc: Bun.Subprocess<"pipe", "pipe", "inherit">; out: ReturnType<typeof lineReader>; count: number }[] = [];
  // The writers' feed messages as they leave for the proxies: the latency up to there is the
  // data plane's (ingest, JetStream, commit); the rest is the proxies' fan-out.
  const nc = await connect({ servers: NATS_URL });
  const atBus: number[] = [];
  const SENT_AT = /"sent_at":([\d.]+)/g;
  nc.subscribe(`${d.cluster}.feed.PotEvent.>`, {
    callback: (_e, m) => {
      const now = performance.timeOrigin + performance.now();
      for (const hit of m.string().matchAll(SENT_AT)) atBus.push(now - Number(hit[1]));
    },
  });
  try {
    for (const [core, count] of [
      [b, Math.ceil(SUBSCRIBERS / 2)],
      [c, Math.floor(SUBSCRIBERS / 2)],
    ] as const) {
      // Every 10th frame sampled: enough for a p99, little work for the subscribers.
      const proc = Bun.spawn([BUN, join(import.meta.dir, "feed-subscriber-fixture.ts"), `${core.ws}/?kinds=PotEvent`, String(count), "10"], { stdin: "pipe", stdout: "pipe" });
      subs.push({ proc, out: lineReader(proc.stdout), count });
    }
    for (const s of subs) {
      const ready = JSON.parse(await s.out.next());
      if (ready.failed) throw new Error(`feed: ${ready.failed} of ${s.count} subscribers could not connect`);
    }
    const total = Math.round(FEED_RATE * FEED_S);
    await paced(a.ports.event, FEED_RATE, FEED_S, true);
    await untilRows(d, total);
    // The last frames are on their way to the subscribers.
    await Bun.sleep(2000);
    const results = [];
    for (const s of subs) {
      s.proc.stdin.end();
      results.push(JSON.parse((await s.out.rest()).trim().split("\n").pop()!) as { received: number; latencies: number[] });
    }
    // Batches the ingest side sealed: at a moderate rate they are small, and each is one commit.
    const messages = (await (await jetstreamManager(nc)).streams.info(d.names.eventStream)).state.last_seq;
    const lat = results.flatMap((r) => r.latencies).sort((x, y) => x - y);
    const bus = atBus.sort((x, y) => x - y);
    const q = (xs: number[], f: number) => xs[Math.min(xs.length - 1, Math.floor(f * xs.length))] ?? Number.NaN;
    return {
      total,
      received: results.reduce((n, r) => n + r.received, 0),
      expected: total * SUBSCRIBERS,
      p50: q(lat, 0.5),
      p99: q(lat, 0.99),
      max: lat.at(-1) ?? Number.NaN,
      messages,
      bus: { n: bus.length, p50: q(bus, 0.5), p99: q(bus, 0.99), max: bus.at(-1) ?? Number.NaN },
    };
  } finally {
    for (const s of subs) s.proc.kill();
    await nc.close();
    await d.stop();
  }
}

const x = (r: number, base: number) => `${(r / base).toFixed(1)}x`;
const ms = (v: number) => v.toFixed(1);

export async function benchCluster(): Promise<string> {
  const out: string[] = [];
  let oneWriter = OVERLOAD_RATE;
  if (PARTS.includes("throughput")) {
    const naiveBatches = batches(NAIVE_N);
    const before = await naive(naiveBatches, NAIVE_N);
    const runs: Throughput[] = [];
    for (const [i, w] of [
      [1, 1],
      [2, 1],
      [1, 2],
      [2, 2],
    ] as const)
      runs.push(await throughput(i, w));
    oneWriter ||= runs[0]!.committed;
    // The baseline again at the end, the better of the two kept: the machine's load changes
    // during the run, and the better baseline gives the smaller (safer) ratios.
    const base = Math.max(before, await naive(naiveBatches, NAIVE_N));
    await closeTestDatabases();
    const rows: (string | number)[][] = [["naive: one process, one INSERT per event (better of first and last)", NAIVE_N, "", base, "1.0x", "", "", "", ""]];
    for (const r of runs) rows.push([r.name, N, r.acked, r.committed, x(r.committed, base), r.p99 === null ? "" : ms(r.p99), r.cpuIngest.toFixed(1), r.cpuWriter.toFixed(1), r.cpuPg === null ? "n/a" : r.cpuPg.toFixed(1)]);
    out.push(
      `Cluster on this machine's PostgreSQL and NATS, every instance its own \`honeybee core\` process, 2 cores shared with other work (expect ±20% between runs); ` +
        `${CONNECTIONS} producer connections per ingest instance, acks on (an EventAck = stored in JetStream); committed = rows counted in PostgreSQL; ` +
        `CPU = user + system time of that role's processes per event (PostgreSQL: the backends serving the run's database, not its WAL writer or checkpointer).`,
      "",
      table(["configuration", "events", "acked events/s", "committed events/s", "vs naive", "ack p99 ms", "ingest CPU µs/event", "writer CPU µs/event", "PostgreSQL CPU µs/event"], rows),
      "",
    );
  }
  if (PARTS.includes("overload")) {
    if (!oneWriter) throw new Error("BENCH_CLUSTER_PARTS without throughput: set BENCH_CLUSTER_OVERLOAD_RATE (events/s) for the overload");
    const lag = await overload(Math.round(2 * oneWriter));
    out.push(
      `Writer lag, 1 ingest + 1 writer fed at 2x its committed rate (${lag.rate.toLocaleString("en-US")} events/s asked, ${Math.round(lag.offered).toLocaleString("en-US")} offered, ` +
        `${Math.round(lag.acked).toLocaleString("en-US")} acked) for ${OVERLOAD_S} s:`,
      "",
      table(
        ["events", "peak pending messages (num_pending + num_ack_pending)", "events per message", "peak events offered but not committed", "drain time after the producer stopped, s"],
        [[lag.total, lag.peakPending, lag.perMessage.toFixed(0), lag.peakBehind, lag.drainS.toFixed(1)]],
      ),
      "",
    );
  }
  if (PARTS.includes("feed")) {
    const f = await feed();
    out.push(
      `Feed across instances: 3 instances with roles ${FEED_ROLES.join(" / ")}, ${SUBSCRIBERS} WebSocket subscribers on B and C (?kinds=PotEvent), ${FEED_RATE.toLocaleString("en-US")} events/s to A for ${FEED_S} s; latency = receive − send time (every 10th frame):`,
      "",
      table(
        ["where", "events", "received / expected", "p50 ms", "p99 ms", "max ms"],
        [
          ["WebSocket subscribers on B and C (frames)", f.total, `${f.received.toLocaleString("en-US")} / ${f.expected.toLocaleString("en-US")}`, ms(f.p50), ms(f.p99), ms(f.max)],
          ["the writers' feed messages on NATS (events)", f.total, `${f.bus.n.toLocaleString("en-US")} / ${f.total.toLocaleString("en-US")}`, ms(f.bus.p50), ms(f.bus.p99), ms(f.bus.max)],
        ],
      ),
      "",
      `${f.messages.toLocaleString("en-US")} JetStream messages (${(f.total / f.messages).toFixed(1)} events per message, each one transaction of a writer).`,
    );
  }
  return out.join("\n").trimEnd();
}

if (import.meta.main) console.log(await benchCluster());
