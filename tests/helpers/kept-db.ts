/**
 * A database that outlives one test Core, so a test can stop Core and start it again on what
 * it stored, on the backend HONEYBEE_TEST_DB names (tests/helpers/postgres.ts): an SQLite file
 * in the test's folder; a PostgreSQL database of its own; with `cluster`, also a cluster name
 * of its own on the machine's NATS. Disposing drops the database and the cluster's streams.
 */
import { join } from "node:path";
import type { CoreConfig } from "../../src/config";
import { onCluster, onPostgres, testDatabase } from "./postgres";

export interface KeptDatabase {
  /** What every Core of the test starts with: `db`, and the bus and cluster name in a cluster. */
  config: Partial<CoreConfig>;
  /** The PostgreSQL URL; null on SQLite. */
  pgUrl: string | null;
  [Symbol.asyncDispose](): Promise<void>;
}

export async function keptDatabase(dir: string): Promise<KeptDatabase> {
  if (!onPostgres()) return { config: { db: join(dir, "core.db") }, pgUrl: null, [Symbol.asyncDispose]: async () => {} };
  const pg = await testDatabase();
  const cluster = onCluster() ? await import("../cluster/helpers") : null;
  const name = cluster?.clusterName();
  return {
    // The transfers under way stay in the test's folder, as they would beside an SQLite file.
    config: { db: pg.url, artifacts_dir: join(dir, "artifacts"), ...(cluster ? { bus: cluster.NATS_URL, cluster: name } : {}) },
    pgUrl: pg.url,
    [Symbol.asyncDispose]: async () => {
      if (cluster && name) await cluster.dropCluster(name).catch(() => {});
      await pg.drop();
    },
  };
}
