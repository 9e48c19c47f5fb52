/**
 * The seam between the sockets that receive events and the event pipeline.
 */
import type { TSchema } from "@sinclair/typebox";

/** Where an event came from; `nodeId` is the sender's proven node, when it has one. */
export interface IngestSource {
  transport: "events" | "control";
  remote: string;
  nodeId?: bigint | null;
}

export interface IngestCounters {
  received: number;
  committed: number;
  rejected: number;
  connections: number;
}

export interface Ingest {
  /**
   * Takes one parsed message in any accepted shape (envelope, bare PotEvent, flat native
   * JSON). Returns an error string when it is not an event, else null.
   */
  submit(obj: unknown, source: IngestSource): string | null;
  /** Stores a NodeEvent (Started, Stopped, Alarm, Error) as an event of its node. */
  submitNodeEvent(nodeId: bigint, payload: unknown, source: IngestSource): void;
  readonly counters: IngestCounters;
  /** Resolves when everything submitted so far is committed. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export type { TSchema };
