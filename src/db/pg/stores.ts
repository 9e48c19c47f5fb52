/**
 * The PostgreSQL stores (see ../stores.ts): one client for the queries, the write-through of
 * the registry and commands, and the node secrets' reads and writes; the event writer opens its own (./writer-channel.ts).
 */
import type { Stores } from "../stores";
import { PgArtifactStore } from "./artifact-store";
import { PgCommandStore } from "./command-store";
import { PgEventQueries } from "./event-queries";
import { openPgDatabase, redactUrl } from "./index";
import { addressParts } from "./address-part";
import { PgSessionPart } from "./session-part";
import { pgWriter } from "./writer-channel";
import { geoResolver } from "../writer-channel";
import { PgCommittedEvents } from "./committed-events";
import { PgOutputStore } from "./output-store";
import { PgNodeSecretStore } from "./node-secret-store";
import { PgRecordingStore } from "./recording-store";
import { PgRegistryStore } from "./registry-store";
import { PgSessionQueries } from "./session-queries";
import { PgAddressStore } from "./address-store";
import { PgIndicatorStore } from "./indicator-store";
import { PgTimeline } from "./timeline";
import { WriteQueue } from "./write-queue";

/** How long a stopping Core waits for queued writes while PostgreSQL is away. */
const WRITE_DRAIN_MS = 10_000;

export async function openPgStores(url: string, onWriteError?: (e: Error) => void): Promise<Stores> {
  const db = await openPgDatabase(url);
  try {
    const report = onWriteError ?? ((err: Error) => console.error(err));
    const writes = new WriteQueue({
      onError: (e, what) => report(new Error(`writing a ${what} record to PostgreSQL failed: ${e.message}`)),
      onStall: (e, waiting) => report(new Error(`PostgreSQL cannot be reached (${e.message}): ${waiting} registry and command writes wait and are tried again until stored`)),
    });
    const events = new PgEventQueries(db.$client);
    const [registry, commands, nodeSecrets, start] = await Promise.all([PgRegistryStore.open(db, writes), PgCommandStore.open(db, writes), new PgNodeSecretStore(db), events.ingestStart()]);
    const outputs = new PgOutputStore(db, url);
    return {
      registry,
      commands,
      nodeSecrets,
      events,
      sessions: new PgSessionQueries(db.$client),
      addresses: new PgAddressStore(db.$client),
      indicators: new PgIndicatorStore(db.$client),
      timeline: new PgTimeline(db.$client),
      outputs,
      committed: new PgCommittedEvents(db.$client),
      artifacts: new PgArtifactStore(db),
      recordings: new PgRecordingStore(db),
      ingestStart: () => start,
      // Sessions and source addresses are written with each batch, by every PostgreSQL writer.
      openWriter: (o) => pgWriter(url, "copy", [...addressParts(geoResolver(o.geo)), new PgSessionPart()]),
      describe: redactUrl(url),
      close: async () => {
        // Bounded: a stop must not wait for a server that is gone.
        const lost = await writes.close(WRITE_DRAIN_MS);
        if (lost) report(new Error(`${lost} registry and command writes were not stored: PostgreSQL could not be reached within ${WRITE_DRAIN_MS / 1000} s of stopping`));
        await outputs.close();
        await db.$client.close();
      },
    };
  } catch (e) {
    await db.$client.close().catch(() => {});
    throw e;
  }
}
