/**
 * The cluster's event data plane against the single-instance PostgreSQL writer, in one run
 * (`bun bench/cluster-writer.ts`; BENCH_EVENTS events, default 100,000; the machine's
 * PostgreSQL and NATS, or PG_ADMIN_URL and NATS_URL):
 *
 * - baseline: an EventPipeline with the PostgreSQL writer (db/pg/writer-channel.ts);
 * - ingest: the same pipeline publishing to JetStream (cluster/ingest-channel.ts), until every PubAck;
 * - writer: one writer role (cluster/writer-role.ts) draining that backlog into PostgreSQL;
 * - both: ingest and writer at once, submit to the last commit.
 */
import { connectBus } from "../src/cluster/connect";
import { ingestChannel } from "../src/cluster/ingest-channel";
import { startWriterRole } from "../src/cluster/writer-role";
import { defaultCoreConfig } from "../src/config";
import { MessageBus } from "../src/core/bus";
import { EventPipeline } from "../src/core/ingest/pipeline";
import type { WriterChannel } from "../src/db/writer-channel";
import { pgWriter } from "../src/db/pg/writer-channel";
import { openPgDatabase } from "../src/db/pg";
import { silentLogger } from "../src/log";
import { scratchDatabase } from "../tests/helpers/postgres";

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";
const source = { transport: "events" as const, remote: "bench" };
const now = Date.now();
const events = Array.from({ length: N }, (_, i) => ({
  eventid: i % 3 ? "cowrie.login.failed" : "cowrie.session.connect",
  node_id: String(1000 + (i % 20)),
  pot_id: `cowrie-${i % 20}`,
  pot_type: "cowrie",
  src_ip: `198.51.${(i >> 8) & 255}.${i & 255}`,
  timestamp: new Date(now - 60_000 + (i % 60_000)).toISOString(),
  username: `user${i % 50}`,
  password: `pw${i % 500}`,
  session: `s${i >> 4}`,
}));

function pipeline(writer: WriterChannel, dictionaries = { sources: [], types: [] }) {
  return new EventPipeline({ config: defaultCoreConfig(), writer, bus: new MessageBus(), logger: silentLogger(), nodeOfPot: () => null, dictionaries });
}

async function submitAll(p: EventPipeline): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    p.submit(events[i], source);
    // Let the writer keep up, as a socket that pauses under overload would.
    if (p.isOverloaded) while (p.isOverloaded) await Bun.sleep(1);
  }
  await p.flush();
  return performance.now() - t0;
}

export async function benchClusterWriter(): Promise<string> {
  const rate = (ms: number) => Math.round(N / (ms / 1000));
  const rows: [string, number][] = [];
  const db1 = await scratchDatabase("honeybee_bench");
  await (await openPgDatabase(db1.url, 1)).$client.close();
  try {
    const p = pipeline(pgWriter(db1.url));
    rows.push(["baseline: pipeline -> PostgreSQL writer", rate(await submitAll(p))]);
    if (process.env.BENCH_DEBUG) console.error(rows);
    await p.stop();
  } finally {
    await db1.drop();
  }
  for (const mode of ["sequential", "together"] as const) {
    const db = await scratchDatabase("honeybee_bench");
    const migrated = await openPgDatabase(db.url, 1);
    const bus = await connectBus({ bus: NATS_URL, cluster: `hbbench_${process.pid}_${mode}`, bus_replicas: 1 }, silentLogger());
    try {
      const dictionaries = { sources: [], types: [] };
      const p = pipeline(ingestChannel({ bus, dictionaries }), dictionaries);
      const stored = async () => Number((await migrated.$client`select count(*)::int as n from events`)[0].n);
      if (mode === "sequential") {
        rows.push(["ingest: pipeline -> JetStream (PubAcked)", rate(await submitAll(p))]);
        const t0 = performance.now();
        const w = await startWriterRole({ bus, pgUrl: db.url, config: { retention_days: 0 }, logger: silentLogger() });
        while (w.stats.stored < N) await Bun.sleep(5);
        rows.push(["writer: JetStream backlog -> PostgreSQL", rate(performance.now() - t0)]);
        await w.stop();
      } else {
        const w = await startWriterRole({ bus, pgUrl: db.url, config: { retention_days: 0 }, logger: silentLogger() });
        const t0 = performance.now();
        await submitAll(p);
        while (w.stats.stored < N) await Bun.sleep(5);
        rows.push(["both at once: submit -> committed in PostgreSQL", rate(performance.now() - t0)]);
        await w.stop();
      }
      if ((await stored()) !== N) throw new Error(`stored ${await stored()} of ${N}`);
      await p.stop();
    } finally {
      await bus.jsm.streams.delete(bus.names.eventStream).catch(() => {});
      await bus.close();
      await migrated.$client.close();
      await db.drop();
    }
  }
  const base = rows[0]![1];
  return [`${N} events, one process, 2 cores shared`, "| path | events/s | x baseline |", "|---|---:|---:|", ...rows.map(([k, v]) => `| ${k} | ${v} | ${(v / base).toFixed(2)} |`)].join("\n");
}

if (import.meta.main) console.log(await benchClusterWriter());
