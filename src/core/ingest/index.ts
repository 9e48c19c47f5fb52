/**
 * The event pipeline: `createIngest` builds it (writer thread or inline writer, dictionaries
 * loaded from the store), `startEventSocket` listens for NDJSON events and feeds it. The node
 * control channel feeds the same pipeline through `Ingest.submit`.
 */
import type { CoreConfig } from "../../config";
import type { Db } from "../../db";
import { EventQueries } from "../../db/event-store";
import { geoLookup } from "../../geo";
import type { Logger } from "../../log";
import type { MessageBus } from "../bus";
import type { Registry } from "../registry";
import { EventPipeline } from "./pipeline";
import type { Ingest } from "./types";
import { inlineWriter, workerWriter } from "./writer";

export { startEventSocket, type EventSocketOptions, type EventSocketHandle } from "./event-socket";

export interface IngestDeps {
  db: Db;
  config: CoreConfig;
  bus: MessageBus;
  registry: Pick<Registry, "nodeOfPot"> & Partial<Pick<Registry, "potTypeOf">>;
  logger: Logger;
  /** Each committed batch's size, lag and events per type, and each rejection's code, for the metrics. */
  onBatchCommitted?: (events: number, lagSeconds: number, byType: Map<string, number>) => void;
  onReject?: (code: string) => void;
  /** Test hook: awaited before each batch goes to the writer, so a test can stall the writer. */
  writerGate?: () => Promise<void>;
}

export function createIngest(deps: IngestDeps): Ingest {
  const { config } = deps;
  const useWorker = config.ingest_worker && config.db !== ":memory:";
  // With the writer thread, the checkpointer thread is the one to copy the WAL into the
  // database: a commit on this thread's connection must not start a copy of its own.
  if (useWorker) deps.db.$client.exec("PRAGMA wal_autocheckpoint = 0");
  const geo = config.geo_enrichment ? { geoipDb: config.geoip_db, asnDb: config.asn_db } : null;
  const enricher = geo && geoLookup(geo);
  return new EventPipeline({
    config,
    writer: useWorker ? workerWriter(config.db, deps.logger, geo) : inlineWriter(deps.db, geo),
    bus: deps.bus,
    logger: deps.logger,
    nodeOfPot: (potId) => deps.registry.nodeOfPot(potId),
    potTypeOf: (nodeId, potId) => deps.registry.potTypeOf?.(nodeId, potId) ?? null,
    dictionaries: new EventQueries(deps.db).dictionaries(),
    spools: new EventQueries(deps.db).spoolPositions(),
    writerGate: deps.writerGate,
    enrich: enricher ? (ip) => enricher.known(ip) : undefined,
    onBatchCommitted: deps.onBatchCommitted,
    onReject: deps.onReject,
  });
}
