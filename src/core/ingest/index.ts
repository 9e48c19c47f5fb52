// Placeholder until the event pipeline lands: accepts nothing.
import type { Db } from "../../db";
import type { Logger } from "../../log";
import type { CoreConfig } from "../../config";
import type { MessageBus } from "../bus";
import type { Registry } from "../registry";
import type { Ingest, IngestCounters } from "./types";

export interface IngestDeps {
  db: Db;
  config: CoreConfig;
  bus: MessageBus;
  registry: Registry;
  logger: Logger;
}

export function createIngest(_deps: IngestDeps): Ingest {
  const counters: IngestCounters = { received: 0, committed: 0, rejected: 0, connections: 0 };
  return {
    counters,
    submit: () => "the event pipeline is not built yet",
    submitNodeEvent: () => {},
    flush: async () => {},
    stop: async () => {},
  };
}

export interface EventSocketOptions {
  host: string;
  port: number;
  ingest: Ingest;
  config: CoreConfig;
  logger: Logger;
}

export function startEventSocket(_opts: EventSocketOptions): { readonly port: number; stop(): Promise<void> } {
  return { port: 0, stop: async () => {} };
}
