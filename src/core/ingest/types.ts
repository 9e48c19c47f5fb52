/**
 * The seam between the sockets that receive events and the event pipeline.
 */
import type { TSchema } from "@sinclair/typebox";
import type { IngestEvent } from "./normalise";
import type { ScannedLine } from "./scan";

/** Where an event came from; `nodeId` is the sender's proven node, when it has one. */
export interface IngestSource {
  transport: "events" | "control";
  remote: string;
  nodeId?: bigint | null;
}

/**
 * received = committed + rejected + pending. `received` counts every message offered as an
 * event (from the event socket and the control channel), `rejected` those that were not one,
 * `connections` the open event socket connections.
 */
export interface IngestCounters {
  received: number;
  committed: number;
  rejected: number;
  connections: number;
  /** Received and not yet committed: the memory that backpressure bounds. */
  pending: number;
  /**
   * Events a node sent again (a reconnect, a crash, a fail-over) that were stored before, known
   * by spool and position: skipped here, or dropped by a cluster's writer (counted by its instance).
   */
  duplicates: number;
  /** Events whose timestamp could not be read: stored at their receive time, the text kept in data. */
  unreadable_timestamps: number;
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
  /** Moves whenever the stored events change (a batch committed, old events deleted): a page read before it moved is still current. */
  readonly version: number;
  /** Resolves when everything submitted so far is committed (or shutdown gave up on it). */
  flush(): Promise<void>;
  /**
   * Resolves once the stats counters count every event committed so far: they are written in
   * bulk, and a stats read asks for them first.
   */
  countsSettled(): Promise<void>;
  /** Rejects, saying how many events were not committed, when `abandon` had to give up on some. */
  stop(): Promise<void>;
  /** Why events cannot be committed now (a failing write, a dead writer or checkpointer thread), or null. */
  problem(): string | null;
  /** Shutdown's deadline: stop retrying; what is not committed stays unacknowledged. */
  abandon(): void;

  // What the event socket needs beyond `submit`: per-stream acknowledgements and backpressure.
  /**
   * Takes one normalised event; `tag` is its stream when the sender asked for acks. An event
   * of the fast path comes with its scan and, for an ASCII line, the bytes it was read from.
   */
  enqueue(event: IngestEvent, tag: StreamTag | null, scan?: ScannedLine, bytes?: Uint8Array, at?: number): void;
  /** Counts and logs (rate-limited) input that is not an event. */
  reject(tag: StreamTag | null, remote: string, code: string, message: string): void;
  /** True while the writer is too far behind; readers should pause. */
  readonly isOverloaded: boolean;
  /** Bytes of data of the events received and not yet committed: with `pending`, the memory that backpressure bounds. */
  readonly pendingBytes: number;
  /** Pending past half of `max_pending_events` or of `max_pending_bytes`: readers take turns (fair-share.ts). */
  readonly isContended: boolean;
  /** `retention_days` in ms (0: no limit): an event older on arrival is stored at its receive time (NormaliseContext.maxAgeMs). */
  readonly maxEventAgeMs: number;
  /** Called after each commit with the id of the last event committed (outputs and rules wake on it). */
  onCommit(listener: (lastId: number) => void): () => void;
  /** Called with true when readers should pause and with false when they may resume. */
  onPressure(listener: (overloaded: boolean) => void): () => void;
  /** The node a pot belongs to, for events that do not say. */
  nodeOfPot(potId: string): bigint | null;
  /** The kind of a pot, for events that do not say. */
  potTypeOf(nodeId: bigint | null, potId: string): string | null;
  /** The last committed position of a node's spool (`spool:<node_id>:<spool_id>`), 0 if none. */
  spoolCommitted(key: string): number;
  /** Counts a line skipped as already committed, and settles it like any other line. */
  skipDuplicate(tag: StreamTag): void;
}

/**
 * One stream of lines with acknowledgements (an event socket connection). `lineNo` counts
 * its lines, events and rejected ones alike; `settled(seq)` is called once lines 1..seq are
 * all committed or rejected.
 */
export interface StreamTag {
  lineNo: number;
  /**
   * A node's spool stream: line L is the spool's event `first + L`. Committed positions are
   * stored with each batch, so a node that resends what Core committed but could not
   * acknowledge (Core died in between) is not stored twice.
   */
  spool?: { key: string; first: number };
  /** Batches not yet committed that hold events of this stream. */
  outstanding: number;
  settled(seq: number): void;
}

export type { TSchema };
