/**
 * What every feature of Core starts from (src/modules/<feature>/): the configuration, the log,
 * the storage seam and the services Core shares between features. A feature reaches storage
 * only through `stores`, and another feature only through what that feature's index exports.
 */
import type { AnyElysia } from "elysia";
import type { CoreConfig } from "../config";
import type { Stores } from "../db/stores";
import type { GeoLookup } from "../geo";
import type { Logger } from "../log";
import type { Security } from "./auth";
import type { MessageBus } from "./bus";
import type { Ingest, IngestCounters } from "./ingest/types";
import type { FeedHub } from "./proxy/feed-hub";
import type { Registry } from "./registry";

export interface CoreContext {
  readonly config: CoreConfig;
  readonly log: Logger;
  readonly stores: Stores;
  readonly security: Security;
  /** GeoIP and ASN lookups of source addresses; null with `geo_enrichment` off. */
  readonly geo: GeoLookup | null;
  /** In-process messages: registry changes, the live feed, command results. */
  readonly bus: MessageBus;
  readonly registry: Registry;
  readonly ingest: Ingest;
  /** The live feed's topics, served by the REST port's stream and the WebSocket proxy. */
  readonly hub: FeedHub;
  /** The ingest counters stats shows: the deployment's in a cluster (every instance summed), this process's alone. */
  counters(): IngestCounters;
  /** Where artifacts' bytes (SQLite) and transfers under way are kept. */
  readonly artifactsDir: string;
}

/** A GET answered from the request URL alone, served straight from Bun's router (src/core/http/app.ts `reads`). */
export type DirectRead = (request: Request) => Response | Promise<Response>;

/**
 * One feature as Core starts it: its REST routes (an Elysia plugin), the GETs served without
 * Elysia's pipeline, and what it runs between start and stop. Features start in the order Core
 * lists them and stop in reverse, before the listeners' pipeline drains.
 */
export interface Feature {
  readonly name: string;
  readonly routes?: AnyElysia;
  readonly reads?: Record<string, DirectRead>;
  start?(): Promise<void> | void;
  stop?(): unknown;
}
