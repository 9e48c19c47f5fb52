/**
 * The event pipeline: `createIngest` builds it (writer thread or inline writer, dictionaries
 * loaded from the store), `startEventSocket` listens for NDJSON events and feeds it. The node
 * control channel feeds the same pipeline through `Ingest.submit`.
 */
import type { CoreConfig } from "../../config";
import type { Db } from "../../db";
import { EventQueries } from "../../db/event-queries";
import { addressParts } from "../../db/pg/address-part";
import { PgSessionPart } from "../../db/pg/session-part";
import type { IngestStart } from "../../db/stores";
import { geoLookup } from "../../geo";
import type { Logger } from "../../log";
import type { MessageBus } from "../bus";
import type { Registry } from "../registry";
import { EventPipeline } from "./pipeline";
import type { PotSighting } from "./batch-sources";
import type { Ingest } from "./types";
import { geoResolver, inlineWriter, workerWriter, type WriterChannel } from "./writer";
import { pgWriter } from "./writer-pg";

export { startEventSocket, type EventSocketOptions, type EventSocketHandle } from "./event-socket";

export interface IngestDeps {
  /** SQLite: the connection (and `config.db` its file). */
  db?: Db | null;
  /** PostgreSQL instead: the database and what the pipeline starts from. */
  postgres?: { url: string; start: IngestStart } | null;
  config: CoreConfig;
  bus: MessageBus;
  registry: Pick<Registry, "nodeOfPot"> & Partial<Pick<Registry, "potTypeOf" | "sighted">>;
  logger: Logger;
  /** Each committed batch's size, lag and events per type, and each rejection's code, for the metrics. */
  onBatchCommitted?: (events: number, lagSeconds: number, byType: Map<string, number>) => void;
  onReject?: (code: string) => void;
  /** Test hook: awaited before each batch goes to the writer, so a test can stall the writer. */
  writerGate?: () => Promise<void>;
  /** Several instances: batches go to the bus (src/cluster/ingest-channel.ts), writers store them. */
  writer?: WriterChannel;
}

export function createIngest(deps: IngestDeps): Ingest {
  const { config } = deps;
  const geo = config.geo_enrichment ? { geoipDb: config.geoip_db, asnDb: config.asn_db } : null;
  const enricher = geo && geoLookup(geo);
  const enrich = enricher ? (ip: string) => enricher.known(ip) : undefined;
  if (deps.postgres) {
    const { url, start } = deps.postgres;
    const parts = [...addressParts(geoResolver(geo))];
    parts.push(new PgSessionPart());
    return new EventPipeline({ ...pipelineDeps(deps), writer: deps.writer ?? pgWriter(url, "copy", parts), dictionaries: start.dictionaries, spools: start.spools, enrich });
  }
  if (!deps.db) throw new Error("createIngest needs a database");
  const db = deps.db;
  const useWorker = config.ingest_worker && config.db !== ":memory:";
  // With the writer thread, the checkpointer thread is the one to copy the WAL into the
  // database: a commit on this thread's connection must not start a copy of its own.
  if (useWorker) db.$client.exec("PRAGMA wal_autocheckpoint = 0");
  return new EventPipeline({
    ...pipelineDeps(deps),
    writer: useWorker ? workerWriter(config.db, deps.logger, geo) : inlineWriter(db, geo),
    dictionaries: new EventQueries(db).dictionaries(),
    spools: new EventQueries(db).spoolPositions(),
    enrich,
  });
}

function pipelineDeps(deps: IngestDeps) {
  return {
    config: deps.config,
    bus: deps.bus,
    logger: deps.logger,
    nodeOfPot: (potId: string) => deps.registry.nodeOfPot(potId),
    potTypeOf: (nodeId: bigint | null, potId: string) => deps.registry.potTypeOf?.(nodeId, potId) ?? null,
    onSources: deps.registry.sighted ? (sightings: PotSighting[], newest: (s: PotSighting) => number) => deps.registry.sighted!(sightings, newest) : undefined,
    writerGate: deps.writerGate,
    onBatchCommitted: deps.onBatchCommitted,
    onReject: deps.onReject,
  };
}
