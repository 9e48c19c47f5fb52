/**
 * Where a cluster writer's CPU goes per batch part (`bun bench/cluster-writer-parts.ts`; the
 * machine's PostgreSQL, or PG_ADMIN_URL): the writer's transactions alone
 * (PgClusterEventWriter.writeShared), without the bus, fed the messages the ingest side would
 * publish for BENCH_EVENTS (100,000) events of `bench cluster`'s traffic (flat Cowrie lines,
 * attack sessions interleaved), BENCH_PER_TX (4) messages of 800 events per transaction, with
 * the writer's parts on or off: none, the GeoIP addresses and counters (db/pg/address-part.ts),
 * the sessions (db/pg/session-part.ts), both. CPU per event of this process (the writer's
 * work: preparing and sending) and of its PostgreSQL backend (/proc, a local server), the
 * median of BENCH_ROUNDS (3) rounds, each on a fresh database.
 */
import { SQL } from "bun";
import { decodeBatch, encodeBatch, mergeBatches, type WireBatch, type WireDictionary } from "../src/cluster/wire";
import { defaultCoreConfig } from "../src/config";
import { MessageBus } from "../src/core/bus";
import { EventPipeline } from "../src/core/ingest/pipeline";
import type { EventBatch } from "../src/db/event-store";
import { openPgDatabase } from "../src/db/pg";
import { addressParts } from "../src/db/pg/address-part";
import type { PgBatchPart } from "../src/db/pg/event-writer";
import { PgClusterEventWriter } from "../src/db/pg/event-writer-cluster";
import { PgSessionPart } from "../src/db/pg/session-part";
import type { WriterChannel } from "../src/db/writer-channel";
import { geoLookup } from "../src/geo";
import { silentLogger } from "../src/log";
import { scratchDatabase } from "../tests/helpers/postgres";
import { eventLinesOf } from "./ingest-events";
import { cpuSeconds } from "./lib";

const N = Number(process.env.BENCH_EVENTS ?? 100_000);
const PER_TX = Number(process.env.BENCH_PER_TX ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const MESSAGE_EVENTS = 800;
const PARTS = ["none", "addresses", "sessions", "both"] as const;

/** The messages an ingest instance would publish for N events, sealed MESSAGE_EVENTS at a time. */
async function messages(): Promise<WireBatch[]> {
  const make = eventLinesOf("flat", 7, Date.now() - 3_600_000);
  const dictionaries = { sources: [], types: [] };
  const dict: WireDictionary = { sources: new Map(), types: new Map() };
  const out: Uint8Array[] = [];
  const channel: WriterChannel = {
    idempotency: { instance: "bench" },
    async write(b: EventBatch) {
      for (const s of b.newSources) dict.sources.set(s.id, s);
      for (const t of b.newTypes) dict.types.set(t.id, t);
      out.push(...encodeBatch(b, b.keys!, dict, 1 << 20));
      return { firstId: null, countsPending: false };
    },
    resume: async () => {},
    flushCounts: async () => {},
    retentionStep: async () => 0,
    close: async () => {},
  };
  const config = { ...defaultCoreConfig(), batch_size: MESSAGE_EVENTS };
  const p = new EventPipeline({ config, writer: channel, bus: new MessageBus(), logger: silentLogger(), nodeOfPot: () => null, dictionaries });
  const source = { transport: "events" as const, remote: "bench" };
  for (let i = 0; i < N; i++) {
    p.submit(JSON.parse(make(i, "1000")), source);
    if (i % MESSAGE_EVENTS === MESSAGE_EVENTS - 1) await Bun.sleep(0);
  }
  await p.flush();
  await p.stop();
  return out.map((m) => decodeBatch(m));
}

const geo = geoLookup({ geoipDb: "", asnDb: "" });
const partsOf = (which: (typeof PARTS)[number]): PgBatchPart[] => [
  ...(which === "addresses" || which === "both" ? addressParts((ip) => geo.lookup(ip)) : []),
  ...(which === "sessions" || which === "both" ? [new PgSessionPart()] : []),
];

async function round(which: (typeof PARTS)[number], msgs: WireBatch[]): Promise<{ writer: number; pg: number }> {
  const db = await scratchDatabase("honeybee_bench");
  await (await openPgDatabase(db.url, 1)).$client.close();
  const sql = new SQL(db.url, { max: 1 });
  try {
    const w = await PgClusterEventWriter.openCluster(sql, "copy", partsOf(which));
    const [{ pid }] = await sql`select pg_backend_pid() as pid`;
    const txs: WireBatch[] = [];
    for (let i = 0; i < msgs.length; i += PER_TX) txs.push(mergeBatches(msgs.slice(i, i + PER_TX)));
    // As the writer role does before it takes the writers' lock.
    for (const b of txs) for (const ip of b.srcIps.split("\n")) if (ip) geo.lookup(ip);
    const pg0 = cpuSeconds(pid);
    const u0 = process.cpuUsage();
    for (const b of txs) await w.writeShared(b);
    const u = process.cpuUsage(u0);
    return { writer: (u.user + u.system) / N, pg: ((cpuSeconds(pid) - pg0) * 1e6) / N };
  } finally {
    await sql.close();
    await db.drop();
  }
}

export async function benchClusterWriterParts(): Promise<string> {
  const msgs = await messages();
  const runs = new Map<string, { writer: number; pg: number }[]>();
  for (let r = 0; r < ROUNDS; r++) for (const which of PARTS) runs.set(which, [...(runs.get(which) ?? []), await round(which, msgs)]);
  const median = (xs: number[]) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const rows = PARTS.map((p) => {
    const v = runs.get(p)!;
    return `| ${p} | ${median(v.map((x) => x.writer)).toFixed(1)} | ${median(v.map((x) => x.pg)).toFixed(1)} |`;
  });
  return [
    `${N} events, ${msgs.length} messages, ${PER_TX} a transaction; median of ${ROUNDS} rounds`,
    "| writer parts | writer CPU µs/event | PostgreSQL CPU µs/event |",
    "|---|---:|---:|",
    ...rows,
  ].join("\n");
}

if (import.meta.main) {
  console.log(await benchClusterWriterParts());
  process.exit(0);
}
