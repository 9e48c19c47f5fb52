/**
 * The seam between Core and its storage: one interface per store, implemented for SQLite
 * (the default, ./*-store.ts) and PostgreSQL (./pg/). `openStores` picks by the `db` setting:
 * a postgres:// URL means PostgreSQL, anything else an SQLite file (or `:memory:`).
 *
 * Core's hot paths call the stores synchronously (a registration, a command's result): they
 * read state that the PostgreSQL stores keep in memory, loaded at start and written through in
 * order. What REST reads may be a promise: it awaits, which costs SQLite nothing measurable.
 * So may a TOTP check (node secrets): every instance must see an enrollment and a spent step
 * at once, so PostgreSQL's are read from the database (src/core/auth/node-auth.ts).
 */
import type { AuthChannel, NodeSecretStore } from "./node-secret-store";
import type { ArtifactStorage } from "./artifact-store";
import type { RecordingStorage } from "./recording-store";
import type { CommandQuery, CommandRecord, CommandStatus } from "./command-store";
import type { EventFilter, EventPage, EventRow, StatsAsk, StatsSummary, StoredEvent } from "./event-queries";
import type { TopEntry } from "./read-limits";
import type { SourceEntry, TypeEntry } from "./event-store";
import type { NodeRow, PotRow, NodeLocation } from "./registry-store";
import type { SessionStorage } from "./session-queries";
import type { AddressStorage } from "./address-store";
import type { IndicatorStorage } from "./indicator-store";
import type { TimelineStorage } from "./timeline";
import type { CommittedEvents, OutputStorage } from "./output-storage";
import type { WriterChannel, WriterOptions } from "./writer-channel";

export type MaybePromise<T> = T | Promise<T>;

export interface RegistryStorage {
  upsertNode(n: NodeRow): void;
  setNodeStatus(nodeId: bigint, status: string, at: number): void;
  markAllNodesUnknown(): void;
  /** Where the operator says the node stands (null: unknown); kept apart from what a registration rewrites. */
  setNodeLocation(nodeId: bigint, location: NodeLocation | null): void;
  listNodes(): NodeRow[];
  upsertPot(p: PotRow): void;
  deletePot(nodeId: bigint, potId: string): void;
  listPots(): PotRow[];
}

export interface CommandStorage {
  insert(r: Omit<CommandRecord, "created_at" | "updated_at" | "data">, at: number): void;
  /** Moves an open record on; false when it is unknown or finished already. */
  update(commandId: string, status: CommandStatus, message: string | null, at: number, data?: unknown): boolean;
  /** The record as the router needs it when a result comes (an open command at least). */
  get(commandId: string): CommandRecord | null;
  /** The record as REST shows it. */
  find(commandId: string): MaybePromise<CommandRecord | null>;
  list(q: CommandQuery): MaybePromise<{ commands: CommandRecord[]; next_cursor: string | null }>;
  /**
   * Several instances (PostgreSQL only): the instance that holds the node takes an open
   * record another instance wrote (it will close it), and the issuer lets go of its copy.
   */
  adopt?(r: CommandRecord): void;
  forget?(commandId: string): void;
  /** Resolves once the writes queued so far are stored (the holder may close the record any moment after); rejects while the database is away. */
  settled?(): Promise<void>;
}

export interface EventReader {
  get(id: number): MaybePromise<EventRow | null>;
  list(filter: EventFilter, limit: number, cursor: number | null): MaybePromise<EventPage>;
  stats(windowMs: number, top: number, now?: number): MaybePromise<StatsSummary>;
  /** Totals and top lists over a time range, of a node, pot or kind if asked (event-queries.ts, stats-range.ts). */
  statsOver(ask: StatsAsk): MaybePromise<StatsSummary>;
  /** The most typed commands among the range's most recent command events (read-limits.ts COMMANDS_SAMPLE). */
  topCommands(since: number, top: number, until?: number): Promise<TopEntry[]>;
  /** The most frequent values of a data field (or combination: `username,password`) among the most recent events matching `filter` (stats-range.ts RECENT_SAMPLE), and how many were read. */
  topField(filter: EventFilter, paths: readonly (readonly string[])[], top: number): Promise<{ values: TopEntry[]; sampled: number }>;
  /**
   * A page as its events' stored text, for a backend whose events only this process writes
   * (SQLite): its pages change only when this process commits, so REST keeps them between
   * commits and writes them without building records. Absent where other instances write.
   */
  listStored?(filter: EventFilter, limit: number, cursor: number | null): { events: StoredEvent[]; nextCursor: number | null };
}

/** What the event pipeline starts from: the dictionaries and the committed spool positions. */
export interface IngestStart {
  dictionaries: { sources: SourceEntry[]; types: TypeEntry[] };
  spools: Map<string, number>;
}

export type { AuthChannel, NodeSecretStore };

export interface Stores {
  readonly registry: RegistryStorage;
  readonly commands: CommandStorage;
  readonly nodeSecrets: NodeSecretStore;
  readonly events: EventReader;
  /** Source addresses with their country and ASN (GeoIP), written by the event writers. */
  readonly addresses: AddressStorage;
  /** Attacker indicators and the blocklist. */
  readonly indicators: IndicatorStorage;
  /** Events per time step (the stats timeline). */
  readonly timeline: TimelineStorage;
  /** Outputs' and alert rules' definitions, positions and leases (docs/outputs.md). */
  readonly outputs: OutputStorage;
  /** Committed events in id order, for outputs and rules. */
  readonly committed: CommittedEvents;
  /** Artifacts' rows and bytes (docs/artifacts.md). */
  readonly artifacts: ArtifactStorage;
  /** Terminal recordings, saved as nodes send them and read by the sessions API. */
  readonly recordings: RecordingStorage;
  /** Attack sessions (docs/sessions.md), written by the event writers. */
  readonly sessions: SessionStorage;
  /** Where the event pipeline starts from: the dictionaries and the committed spool positions. */
  ingestStart(): IngestStart;
  /**
   * The pipeline's writer channel: SQLite's writer thread (or inline), PostgreSQL's writer on
   * a connection of its own with the batch parts (sessions, addresses). A cluster's ingest
   * instances publish to the bus instead (src/cluster/ingest-channel.ts).
   */
  openWriter(o: WriterOptions): WriterChannel;
  /** Says where the data is, for logs and messages (a PostgreSQL URL without its password). */
  readonly describe: string;
  /** Waits for the writes queued so far (PostgreSQL), then closes the connections. */
  close(): Promise<void>;
}

export interface StoreOptions {
  /** SQLite: the folder of the artifacts' bytes (PostgreSQL keeps them in artifact_chunks). */
  artifactsDir: string;
}

export async function openStores(db: string, onWriteError?: (e: Error) => void, opts: StoreOptions = { artifactsDir: "./data/artifacts" }): Promise<Stores> {
  const { isPostgresUrl } = await import("./pg");
  if (isPostgresUrl(db)) {
    const { openPgStores } = await import("./pg/stores");
    return openPgStores(db, onWriteError);
  }
  const { openDatabase } = await import("./index");
  const { RegistryStore } = await import("./registry-store");
  const { CommandStore } = await import("./command-store");
  const { SqlNodeSecretStore } = await import("./node-secret-store");
  const { EventQueries } = await import("./event-queries");
  const { SessionQueries } = await import("./session-queries");
  const { SqlAddressStore } = await import("./address-store");
  const { SqlIndicatorStore } = await import("./indicator-store");
  const { SqlTimeline } = await import("./timeline");
  const { ArtifactStore } = await import("./artifact-store");
  const { RecordingStore } = await import("./recording-store");
  const { OutputStore } = await import("./output-store");
  const { EventReader: CommittedReader } = await import("./event-reader");
  const { sqliteEventWriting } = await import("./writer-channel");
  const sqlite = openDatabase(db);
  return {
    registry: new RegistryStore(sqlite),
    commands: new CommandStore(sqlite),
    nodeSecrets: new SqlNodeSecretStore(sqlite),
    events: new EventQueries(sqlite),
    sessions: new SessionQueries(sqlite),
    addresses: new SqlAddressStore(sqlite),
    indicators: new SqlIndicatorStore(sqlite),
    timeline: new SqlTimeline(sqlite),
    outputs: new OutputStore(sqlite),
    committed: new CommittedReader(sqlite),
    artifacts: new ArtifactStore(sqlite, opts.artifactsDir),
    recordings: new RecordingStore(sqlite),
    ...sqliteEventWriting(sqlite, db),
    describe: db,
    close: async () => sqlite.$client.close(),
  };
}
