/**
 * The event pipeline: `createIngest` builds it (writer thread or inline writer, dictionaries
 * loaded from the store), `startEventSocket` listens for NDJSON events and feeds it. The node
 * control channel feeds the same pipeline through `Ingest.submit`.
 */
import type { CoreConfig } from "../../config";
import type { Stores } from "../../db/stores";
import { geoLookup } from "../../geo";
import type { Logger } from "../../log";
import type { MessageBus } from "../bus";
import type { Registry } from "../registry";
import { EventPipeline } from "./pipeline";
import type { PotSighting } from "./batch-sources";
import type { Ingest } from "./types";
import type { WriterChannel } from "../../db/writer-channel";

export { startEventSocket, type EventSocketOptions, type EventSocketHandle } from "./event-socket";

export interface IngestDeps {
  /** Where the pipeline starts from and the writer it sends batches to (src/db/stores.ts). */
  store: Pick<Stores, "ingestStart" | "openWriter">;
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
  const start = deps.store.ingestStart();
  const writer = deps.writer ?? deps.store.openWriter({ worker: config.ingest_worker, geo, logger: deps.logger });
  return new EventPipeline({ ...pipelineDeps(deps), writer, dictionaries: start.dictionaries, spools: start.spools, enrich });
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
