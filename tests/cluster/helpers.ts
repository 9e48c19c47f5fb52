/**
 * A cluster's event data plane for tests: a cluster name of its own on the machine's NATS
 * server (NATS_URL, default nats://127.0.0.1:4222) and a database of its own on its
 * PostgreSQL (tests/helpers/postgres.ts); both removed at the end.
 */
import { SQL } from "bun";
import { connect as natsConnect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { connectBus, type Bus } from "../../src/cluster/connect";
import { ingestChannel } from "../../src/cluster/ingest-channel";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { EventPipeline } from "../../src/core/ingest/pipeline";
import type { SourceEntry, TypeEntry } from "../../src/db/event-store";
import { openPgDatabase } from "../../src/db/pg";
import { silentLogger } from "../../src/log";
import { scratchDatabase } from "../helpers/postgres";

export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export const clusterName = (): string => `t${process.pid}x${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** Removes a test cluster's streams (and so their consumers) from a NATS server. */
export async function dropCluster(cluster: string, url = NATS_URL): Promise<void> {
  const nc = await natsConnect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    for await (const s of jsm.streams.list()) if (s.config.name.startsWith(`${cluster}-`)) await jsm.streams.delete(s.config.name);
  } finally {
    await nc.close();
  }
}

/** A migrated database for every instance of a test. */
export async function sharedDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const db = await scratchDatabase("cluster");
  const migrated = await openPgDatabase(db.url);
  await migrated.$client.close();
  return db;
}

/** A flat event line numbered `seq` of `producer`: the same line every time it is sent. */
export const numbered = (producer: string) => (seq: number) =>
  JSON.stringify({ eventid: "test.numbered", timestamp: new Date(Date.UTC(2026, 0, 1) + seq).toISOString(), src_ip: `198.51.100.${seq % 250}`, producer, seq, honeybee_honeypot_id: `pot-${producer}` });

/** Rows and distinct numbers stored per producer, read from PostgreSQL itself. */
export async function storedPerProducer(url: string): Promise<Record<string, { rows: number; distinct: number; max: number }>> {
  const sql = new SQL(url, { max: 1 });
  try {
    const rows = await sql`select data::jsonb->>'producer' as p, count(*)::int as n, count(distinct data::jsonb->>'seq')::int as d, max((data::jsonb->>'seq')::int) as m
      from events where data::jsonb ? 'producer' group by 1`;
    return Object.fromEntries(rows.map((r: any) => [r.p, { rows: r.n, distinct: r.d, max: r.m }]));
  } finally {
    await sql.close();
  }
}
export const BIG = 18446744073709551557n;
export const NOW = Date.now();

export interface ClusterCtx {
  bus: Bus;
  cluster: string;
  pg: { url: string; sql: Bun.SQL };
  /** A second connection to the bus, as another instance has. */
  connect(): Promise<Bus>;
}

export async function withCluster(run: (c: ClusterCtx) => Promise<void>): Promise<void> {
  const cluster = clusterName();
  const db = await scratchDatabase("honeybee_test");
  const migrated = await openPgDatabase(db.url, 2);
  const buses: Bus[] = [];
  const connect = async () => {
    const b = await connectBus({ bus: NATS_URL, cluster, bus_replicas: 1 }, silentLogger());
    buses.push(b);
    return b;
  };
  try {
    const bus = await connect();
    await run({ bus, cluster, pg: { url: db.url, sql: migrated.$client }, connect });
  } finally {
    await buses[0]?.jsm.streams.delete(buses[0].names.eventStream).catch(() => {});
    for (const b of buses) await b.close().catch(() => {});
    await migrated.$client.close();
    await db.drop();
  }
}

/** An ingest instance's pipeline: its batches go to JetStream. */
export function ingestPipeline(bus: Bus, opts: { batchSize?: number; maxBytes?: number } = {}) {
  const dictionaries = { sources: [] as SourceEntry[], types: [] as TypeEntry[] };
  return new EventPipeline({
    config: defaultCoreConfig({ batch_size: opts.batchSize ?? 100, batch_delay_ms: 1 }),
    writer: ingestChannel({ bus, dictionaries, maxBytes: opts.maxBytes }),
    bus: new MessageBus(),
    logger: silentLogger(),
    nodeOfPot: () => null,
    dictionaries,
    retryMs: 50,
  });
}

/** Realistic events: three pots (one without node), credentials, unicode, some without address. */
export function sampleEvents(n: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const pot = i % 3;
    return {
      eventid: pot === 2 ? "dionaea.connection" : i % 2 ? "cowrie.login.failed" : "cowrie.session.connect",
      ...(pot === 2 ? {} : { node_id: BIG }),
      pot_id: ["cowrie-01", "cowrie-02", "dionaea.1"][pot],
      pot_type: pot === 2 ? "dionaea" : "cowrie",
      ...(i % 7 === 0 ? {} : { src_ip: `198.51.${i % 256}.${i % 11}` }),
      timestamp: new Date(NOW - 3_600_000 + i).toISOString(),
      username: `user${i % 13}`,
      password: `pässwörd ${i % 5} 𝄞`,
      seq: i,
    };
  });
}

/** The stored events, in id order, as a reader sees them. */
export async function storedRows(sql: Bun.SQL) {
  return sql`select e.id::float8 as id, e.ts::float8 as ts, s.node_id, s.pot_id, s.pot_type, t.name as type, e.src_ip, e.data
    from events e left join event_sources s on s.id = e.source_id join event_types t on t.id = e.type_id order by e.id`;
}

export async function countRows(sql: Bun.SQL) {
  return sql`select kind, bucket, key, count::float8 as count from event_counts order by kind, bucket, key`;
}

export async function until<T>(check: () => Promise<T> | T, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(50);
  }
}
