/**
 * The database schema: the single source for migrations (drizzle-kit) and queries.
 *
 * node_id is a u64 and SQLite integers are signed 64-bit, so ids are stored as their exact
 * decimal text; they are compared for equality only, never ordered.
 */
import { blob, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const nodes = sqliteTable("nodes", {
  nodeId: text("node_id").primaryKey(),
  nodeName: text("node_name").notNull(),
  nodeType: text("node_type").notNull(),
  status: text("status").notNull(),
  address: text("address"),
  port: integer("port"),
  registeredAt: integer("registered_at").notNull(),
  lastSeen: integer("last_seen").notNull(),
});

export const honeypots = sqliteTable(
  "honeypots",
  {
    nodeId: text("node_id").notNull(),
    potId: text("pot_id").notNull(),
    potType: text("pot_type").notNull(),
    status: text("status").notNull(),
    message: text("message"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.potId] }), index("honeypots_pot_id").on(t.potId)],
);

export const commands = sqliteTable(
  "commands",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    commandId: text("command_id").notNull().unique(),
    nodeId: text("node_id").notNull(),
    name: text("name").notNull(),
    potId: text("pot_id"),
    body: text("body").notNull(),
    status: text("status").notNull(),
    message: text("message"),
    /** The node's answer (CommandResult.data) as JSON, when it sent one. */
    data: text("data"),
    source: text("source").notNull(),
    principal: text("principal"),
    remoteAddr: text("remote_addr"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("commands_node").on(t.nodeId, t.id)],
);

/**
 * Events. Designed together with the ingest rate (README, "Benchmarks"): each per-event
 * index entry costs the single writer about 1 µs per event, and an index keyed by source IP
 * dirties a different page per event (15x slower with a million rows present; in realistic
 * traffic nearly every event of a 4096-event segment has a different address). So the events
 * table has no secondary index at all, and the filters are served per segment:
 *
 * - `id` is assigned by the one writer in arrival order; it is the pagination cursor and,
 *   shifted right by 12, the segment (4096 consecutive ids) a row belongs to. Reading one
 *   segment is a rowid range scan.
 * - node/pot/kind and the event type are small-int dictionary ids (`event_sources`,
 *   `event_types`): narrow rows; filters on them are resolved to ids first.
 * - per segment, written once per batch: its time range and count, and a Bloom filter of its
 *   source addresses (`event_segments`, like PostgreSQL's BRIN minmax and bloom indexes), and
 *   which event types and sources occur in it (`event_segment_keys`). A query scans only the
 *   segments that can match, newest first.
 * - the stats' top-N lists come from hourly counters (`event_counts`), aggregated in memory
 *   by the writer and flushed every `stats_flush_ms` with a watermark (`event_meta`), so a
 *   crash recounts from the events themselves.
 */
export const events = sqliteTable("events", {
  id: integer("id").primaryKey(),
  ts: integer("ts").notNull(),
  sourceId: integer("source_id").notNull(),
  typeId: integer("type_id").notNull(),
  srcIp: text("src_ip"),
  data: text("data").notNull(),
});

/** Where events come from: one row per (node, pot, pot kind) seen. */
export const eventSources = sqliteTable("event_sources", {
  id: integer("id").primaryKey(),
  nodeId: text("node_id"),
  potId: text("pot_id"),
  potType: text("pot_type"),
});

export const eventTypes = sqliteTable("event_types", {
  id: integer("id").primaryKey(),
  name: text("name").notNull().unique(),
});

/** Per segment (4096 ids): the time range of its events, how many there are, a Bloom filter of their source addresses. */
export const eventSegments = sqliteTable("event_segments", {
  seg: integer("seg").primaryKey(),
  minTs: integer("min_ts").notNull(),
  maxTs: integer("max_ts").notNull(),
  count: integer("count").notNull(),
  ipBloom: blob("ip_bloom", { mode: "buffer" }).notNull(),
});

/** Which event types (`kind` "type") and sources (`kind` "source") occur in a segment. */
export const eventSegmentKeys = sqliteTable(
  "event_segment_keys",
  {
    kind: text("kind").notNull(),
    value: integer("value").notNull(),
    seg: integer("seg").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.value, t.seg] })],
);

/** Events per hour (`bucket` = hours since the epoch) by source IP, username, password and event type. */
export const eventCounts = sqliteTable(
  "event_counts",
  {
    kind: text("kind").notNull(),
    bucket: integer("bucket").notNull(),
    key: text("key").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.bucket, t.key] })],
);

/**
 * The hourly counters of each finished day summed up, the DAILY_KEYS most frequent keys per
 * kind: a window of days reads a few thousand rows per day instead of 24 hours of counters
 * (a 7-day window over 10M events took 1.26 s from hourly counters alone).
 */
export const eventCountsDaily = sqliteTable(
  "event_counts_daily",
  {
    kind: text("kind").notNull(),
    day: integer("day").notNull(),
    key: text("key").notNull(),
    count: integer("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.day, t.key] })],
);

/** Small bookkeeping values of the event store (the counters' watermark). */
export const eventMeta = sqliteTable("event_meta", {
  key: text("key").primaryKey(),
  value: integer("value").notNull(),
});

/**
 * Per-node TOTP secrets (node authentication) and the last accepted time step per channel,
 * which makes a replayed code useless.
 */
export const nodeSecrets = sqliteTable("node_secrets", {
  nodeId: text("node_id").primaryKey(),
  secret: text("secret").notNull(),
  controlStep: integer("control_step").notNull().default(0),
  eventsStep: integer("events_step").notNull().default(0),
  createdAt: integer("created_at").notNull(),
});

/** Files attackers left (downloads, uploads), by content: docs/artifacts.md. Times are epoch ms. */
export const artifacts = sqliteTable("artifacts", {
  sha256: text("sha256").primaryKey(),
  size: integer("size").notNull(),
  /** Media type and extension from the file's magic bytes, null when unknown. */
  mime: text("mime"),
  ext: text("ext"),
  /** 1 once the whole file is in Core's artifacts folder. */
  stored: integer("stored").notNull(),
  firstSeen: integer("first_seen").notNull(),
  lastSeen: integer("last_seen").notNull(),
});

/** Each time a file was seen: which node, pot and session, from which URL or under which name. */
export const artifactSightings = sqliteTable(
  "artifact_sightings",
  {
    /** `<node_id>:<sighting_id>`: a repeated offer (after a reconnect) is the same sighting. */
    id: text("id").primaryKey(),
    sha256: text("sha256").notNull(),
    nodeId: text("node_id").notNull(),
    potId: text("pot_id"),
    source: text("source"),
    session: text("session"),
    url: text("url"),
    filename: text("filename"),
    truncated: integer("truncated").notNull(),
    seenAt: integer("seen_at").notNull(),
  },
  (t) => [index("artifact_sightings_sha256").on(t.sha256), index("artifact_sightings_session").on(t.session)],
);
