/**
 * What the cluster tests share: a cluster name of their own on the machine's NATS (removed
 * afterwards) and one PostgreSQL database for all the instances of a test.
 */
import { SQL } from "bun";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { scratchDatabase } from "../helpers/postgres";
import { openPgDatabase } from "../../src/db/pg";

export const NATS_URL = process.env.NATS_URL ?? "nats://127.0.0.1:4222";

export const clusterName = (): string => `t${process.pid}x${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** Removes a test cluster's streams (and so their consumers) from a NATS server. */
export async function dropCluster(cluster: string, url = NATS_URL): Promise<void> {
  const nc = await connect({ servers: url });
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
