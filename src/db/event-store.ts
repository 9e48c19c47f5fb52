/**
 * What the event tables' writer and readers share: the segment size, the meta keys, the
 * counter kinds, and the batch as it crosses from the parsing thread to the writer. The
 * writer is event-writer.ts (SQLite) and pg/event-writer.ts; the queries event-queries.ts and
 * pg/event-queries.ts. See the `events` table in schema.ts for why the storage looks the way
 * it does.
 */
import { eq, sql } from "drizzle-orm";
import type { Db } from "./index";
import { eventMeta } from "./schema";

/** Consecutive ids per segment, the unit the per-segment summaries describe. */
export const SEG_SIZE = 4096;
export const HOUR_MS = 3_600_000;
/** The counters' watermark: every event with a smaller or equal id is counted in event_counts. */
export const COUNTED_THROUGH = "counted_through_id";
/** The last event id ever given: retention may delete every event, and ids must never come back. */
export const LAST_ID = "last_event_id";
/** Days (since the epoch, UTC) up to this one are summed up in event_counts_daily. */
export const DAILY_THROUGH = "counts_daily_through";
export const DAY_HOURS = 24;
/** Keys kept per kind and day in event_counts_daily (the top lists show a few dozen at most). */
export const DAILY_KEYS = 5000;
/**
 * `country` and `asn` are counted from the source addresses when the counters are written
 * (address-store.ts); `hassh` from the data of SSH clients' key exchange events (isKexType).
 */
export const COUNT_KINDS = ["src_ip", "username", "password", "event_type", "country", "asn", "hassh"] as const;
export type CountKind = (typeof COUNT_KINDS)[number];

/** The writers' transactions take the write lock at BEGIN: a reader upgrading mid-transaction is what deadlocks SQLite writers. */
export const IMMEDIATE = { behavior: "immediate" } as const;

// Type aliases, not interfaces: Drizzle's placeholder values must be index-signature compatible.
export type SourceEntry = { id: number; nodeId: string | null; potId: string | null; potType: string | null };
export type TypeEntry = { id: number; name: string };

/**
 * A batch as it crosses from the parsing thread to the writer: columns, not objects, so the
 * copy between threads is a few typed arrays and two strings instead of thousands of objects.
 * JSON text never contains a raw newline, and addresses are checked to contain none, so "\n"
 * joins them safely.
 */
export interface EventBatch {
  n: number;
  ts: Float64Array;
  sourceId: Int32Array;
  typeId: Int32Array;
  /** n addresses joined by "\n"; "" where an event has none. */
  srcIps: string;
  /**
   * The events' data: UTF-8 JSON objects one after another, event i ending at `dataEnds[i]`.
   * Bytes, not a string: the pipeline copies most of them straight from the socket's chunks,
   * and an ArrayBuffer moves to the writer's thread without a copy (transferred) and back.
   * The buffer may go on past the last event's end.
   */
  data: ArrayBuffer;
  dataEnds: Int32Array;
  /**
   * Username and password counts of the batch for the stats, counted by the receiving thread
   * (which has the parsed events): JSON of [kind, hour bucket, [[key, count], ...]]. One string,
   * because an array of strings costs ~0.1 µs per element to pass between threads.
   */
  credCounts: string;
  newSources: SourceEntry[];
  newTypes: TypeEntry[];
  /** Node spool positions this batch commits (`spool:<node>:<spool>`, position). */
  spools: [string, number][];
  /**
   * Each event's idempotency key, from its sender and its position in that sender's stream
   * (core/ingest/sender-keys.ts): only for a writer channel that asks (a cluster's, whose
   * writers store a key once). One writer alone needs none: spool positions commit with the events.
   */
  keys?: BigInt64Array;
}

/** A batch as a cluster's writers take it from the bus (src/cluster/wire.ts). */
export interface KeyedBatch extends EventBatch {
  /** Idempotency key of each event (core/ingest/sender-keys.ts). */
  keys: BigInt64Array;
  /** `credCounts` counts exactly these events; otherwise the writer counts them from the data. */
  credsComplete: boolean;
}

/** The SQLite writers' statement that sets one event_meta key. */
export function metaUpsert(db: Db) {
  return db
    .insert(eventMeta)
    .values({ key: sql.placeholder("key"), value: sql.placeholder("value") })
    .onConflictDoUpdate({ target: eventMeta.key, set: { value: sql`excluded.value` } })
    .prepare();
}

export function readDailyThrough(db: Db): number | null {
  return db.select({ value: eventMeta.value }).from(eventMeta).where(eq(eventMeta.key, DAILY_THROUGH)).get()?.value ?? null;
}

/** The bytes of a batch's events' data (the buffer may go on past them). */
export function batchBytes(b: Pick<EventBatch, "n" | "data" | "dataEnds">): Buffer {
  return Buffer.from(b.data, 0, b.n === 0 ? 0 : b.dataEnds[b.n - 1]!);
}

/** The data of each event of a batch, as text. */
export function batchData(b: Pick<EventBatch, "n" | "data" | "dataEnds">): string[] {
  // The buffer may be longer than the events (the pipeline reuses its buffers).
  const bytes = batchBytes(b);
  // Decoded once: while it is ASCII (the text as long as the bytes), offsets are indices.
  const all = bytes.toString("utf8");
  const ascii = all.length === bytes.length;
  const out: string[] = new Array(b.n);
  for (let i = 0, from = 0; i < b.n; i++) {
    const to = b.dataEnds[i]!;
    out[i] = ascii ? all.slice(from, to) : bytes.toString("utf8", from, to);
    from = to;
  }
  return out;
}
