/**
 * The PostgreSQL stores (see ../stores.ts): one client for the queries, the write-through of
 * the registry and commands, and the node secrets' reads and writes; the event writer opens its own (src/core/ingest/writer-pg.ts).
 */
import type { Stores } from "../stores";
import { PgCommandStore } from "./command-store";
import { PgEventQueries } from "./event-queries";
import { openPgDatabase } from "./index";
import { PgNodeSecretStore } from "./node-secret-store";
import { PgRegistryStore } from "./registry-store";
import { WriteQueue } from "./write-queue";

export async function openPgStores(url: string, onWriteError?: (e: Error) => void): Promise<Stores> {
  const db = await openPgDatabase(url);
  try {
    const writes = new WriteQueue((e, what) => (onWriteError ?? ((err) => console.error(err)))(new Error(`writing a ${what} record to PostgreSQL failed: ${e.message}`)));
    const events = new PgEventQueries(db.$client);
    const [registry, commands, nodeSecrets, start] = await Promise.all([PgRegistryStore.open(db, writes), PgCommandStore.open(db, writes), new PgNodeSecretStore(db), events.ingestStart()]);
    return {
      registry,
      commands,
      nodeSecrets,
      events,
      sqlite: null,
      postgres: { url, start },
      close: async () => {
        await writes.settled();
        await db.$client.close();
      },
    };
  } catch (e) {
    await db.$client.close().catch(() => {});
    throw e;
  }
}
