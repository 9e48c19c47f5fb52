/**
 * What the cluster tests share: a cluster name of their own on the machine's NATS (removed
 * afterwards) and one PostgreSQL database for all the instances of a test.
 */
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
