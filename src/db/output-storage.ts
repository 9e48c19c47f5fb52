/**
 * What outputs and alert rules need from storage (docs/outputs.md), on every backend: the
 * committed events in id order, each reader's position, the definitions made over REST, the
 * values `new_value` rules have seen, and who delivers a reader when several instances share
 * the database. SQLite: ./output-store.ts and ./event-reader.ts; PostgreSQL: ./pg/output-store.ts
 * and ./pg/committed-events.ts.
 */
import type { EventRow } from "./event-queries";

type MaybePromise<T> = T | Promise<T>;

export interface StoredDefinition {
  name: string;
  definition: unknown;
  /** Paused over REST: kept, not run (an output keeps its position, a rule raises nothing). */
  paused: boolean;
  /** Kept by an edit, new when a definition is removed and made anew under its name. */
  createdAt: number;
}

/**
 * The stored JSON of a definition: the definition itself, with `"$paused": true` while it is
 * paused (a key no definition has: their schemas take no unknown key).
 */
export const PAUSED_KEY = "$paused";

export function encodeDefinition(definition: unknown, paused: boolean): string {
  return JSON.stringify(paused ? { ...(definition as object), [PAUSED_KEY]: true } : definition);
}

export function decodeDefinition(row: { name: string; definition: string; createdAt: number }): StoredDefinition {
  const parsed = JSON.parse(row.definition);
  const paused = parsed !== null && typeof parsed === "object" && parsed[PAUSED_KEY] === true;
  if (paused) delete parsed[PAUSED_KEY];
  return { name: row.name, definition: parsed, paused, createdAt: row.createdAt };
}

/**
 * Committed events, for the readers with their own position. Ids grow in commit order on
 * every backend (a cluster's writers take turns on one lock row), so a reader that went past
 * an id never misses an event committed after it.
 */
export interface CommittedEvents {
  /** Up to `limit` committed events with ids above `position`, oldest first. */
  after(position: number, limit: number): MaybePromise<EventRow[]>;
  /** The id of the newest committed event, 0 when there is none. */
  lastId(): MaybePromise<number>;
}

/**
 * Which instance delivers a reader. Alone, always this one. Several instances on one
 * PostgreSQL database share the positions, so exactly one may move each: the one that holds
 * its lease, which another takes over once the holder is gone.
 */
export interface ReaderLeases {
  /** True when this instance holds the lease of `reader` (taking it when it is free); false when another does or it cannot be known now. */
  take(reader: string): MaybePromise<boolean>;
  /** Lets another instance take it (a reader stopped or removed). */
  release(reader: string): MaybePromise<void>;
}

export interface OutputStorage {
  position(reader: string): MaybePromise<number | null>;
  /**
   * Stores a reader's position; true once written. `wait` false may give up (false, nothing
   * written) rather than wait for a lock the event writer holds: SQLite's write lock is the
   * event writer's, and waiting for it stalled the thread that receives events. PostgreSQL writes.
   */
  savePosition(reader: string, position: number, wait: boolean): MaybePromise<boolean>;
  outputs(): MaybePromise<StoredDefinition[]>;
  /** False when an output of that name exists already. */
  addOutput(name: string, type: string, definition: unknown): MaybePromise<boolean>;
  /** Replaces the definition (keeping its position, creation time and paused state); false when there is none of that name. */
  updateOutput(name: string, type: string, definition: unknown): MaybePromise<boolean>;
  /** Pauses or resumes; false when there is no output of that name. */
  pauseOutput(name: string, paused: boolean): MaybePromise<boolean>;
  /** Removes the definition and the output's position. */
  deleteOutput(name: string): MaybePromise<boolean>;
  rules(): MaybePromise<StoredDefinition[]>;
  addRule(name: string, definition: unknown): MaybePromise<boolean>;
  /** Replaces the definition (keeping its paused state); `forgetSeen` drops the values it has seen (its `new_value` field changed). */
  updateRule(name: string, definition: unknown, forgetSeen: boolean): MaybePromise<boolean>;
  pauseRule(name: string, paused: boolean): MaybePromise<boolean>;
  /** Removes the definition and the values the rule has seen. */
  deleteRule(name: string): MaybePromise<boolean>;
  seenValues(rule: string): MaybePromise<string[]>;
  addSeen(rule: string, values: string[]): MaybePromise<void>;
  readonly leases: ReaderLeases;
}

/** The leases of an instance alone: every reader is its own. */
export const ALONE: ReaderLeases = { take: () => true, release: () => {} };
