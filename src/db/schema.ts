/**
 * The database schema: the single source for migrations (drizzle-kit) and queries.
 *
 * node_id is a u64 and SQLite integers are signed 64-bit, so ids are stored as their exact
 * decimal text; they are compared for equality only, never ordered.
 */
import { sql } from "drizzle-orm";
import { blob, index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

export const nodes = sqliteTable("nodes", {
  nodeId: text("node_id").primaryKey(),
  nodeName: text("node_name").notNull(),
  nodeType: text("node_type").notNull(),
  status: text("status").notNull(),
  address: text("address"),
  port: integer("port"),
  registeredAt: integer("registered_at").notNull(),
  lastSeen: integer("last_seen").notNull(),
  // Where the operator says the sensor stands (PUT /api/v1/nodes/{id}/location), for the attack map; null until set.
  lat: real("lat"),
  lon: real("lon"),
  locationLabel: text("location_label"),
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

/**
 * Where each reader of the stored events has got to (docs/outputs.md): `output:<name>` for an
 * output, `rules` for the alert rules. `position` is the id of the last event it is done
 * with; it moves only after delivery, so a restart goes on from there.
 */
export const readerPositions = sqliteTable("reader_positions", {
  reader: text("reader").primaryKey(),
  position: integer("position").notNull(),
  updatedAt: integer("updated_at").notNull(),
});

/** Outputs defined over REST (those of the config file live there); `definition` is the JSON body. */
export const outputs = sqliteTable("outputs", {
  name: text("name").primaryKey(),
  type: text("type").notNull(),
  definition: text("definition").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** Alert rules defined over REST; `definition` is the JSON body. */
export const alertRules = sqliteTable("alert_rules", {
  name: text("name").primaryKey(),
  definition: text("definition").notNull(),
  createdAt: integer("created_at").notNull(),
});

/** Values a `new_value` rule has seen (a new ASN stays new only once, across restarts). */
export const ruleSeen = sqliteTable(
  "rule_seen",
  {
    rule: text("rule").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.rule, t.value] })],
);

/**
 * What the enrichment found for each source address (see src/geo): written by the event
 * writer once per new address (with the hourly counters, not per event), so filtering events
 * by country or ASN and the indicators read it instead of looking every event up.
 * `first_seen` is the start of the hour the address was first counted in.
 */
export const eventAddresses = sqliteTable(
  "event_addresses",
  {
    ip: text("ip").primaryKey(),
    country: text("country"),
    asn: integer("asn"),
    asOrg: text("as_org"),
    firstSeen: integer("first_seen").notNull(),
  },
  (t) => [index("event_addresses_country").on(t.country), index("event_addresses_asn").on(t.asn)],
);

/**
 * Attack sessions (Cowrie's `session` field), one row per (event source, session), kept by
 * the event writer in the same transaction as the batch: one upsert per distinct session in
 * a batch, like the counters. Rows are appended in the order sessions are first seen (`id`),
 * so a new session costs an append, not a random B-tree insert (see `events`); the writer
 * finds a recent session's row through memory (src/db/session-tracker.ts). The session's events
 * are read through `segs`, the segments (see `events`) that hold them: a rowid range scan of
 * each, no per-event index. The partial indexes hold only the sessions worth looking at
 * (a login, commands, files), a small share of the table.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: integer("id").primaryKey(),
    sourceId: integer("source_id").notNull(),
    session: text("session").notNull(),
    srcIp: text("src_ip"),
    startTs: integer("start_ts").notNull(),
    endTs: integer("end_ts").notNull(),
    firstEventId: integer("first_event_id").notNull(),
    lastEventId: integer("last_event_id").notNull(),
    events: integer("events").notNull(),
    /** The credentials of the first successful login, when there was one. */
    loginSuccess: integer("login_success").notNull().default(0),
    username: text("username"),
    password: text("password"),
    commands: integer("commands").notNull().default(0),
    /** Files downloaded or uploaded (`cowrie.session.file_download`, `file_upload`). */
    files: integer("files").notNull().default(0),
    /** The session's terminal was recorded (`cowrie.log.closed`). */
    ttylog: integer("ttylog").notNull().default(0),
    closed: integer("closed").notNull().default(0),
    /** Segments holding the session's events, comma-separated, ascending. */
    segs: text("segs").notNull(),
  },
  (t) => [
    index("sessions_login").on(t.id).where(sql`login_success = 1`),
    index("sessions_commands").on(t.id).where(sql`commands > 0`),
    index("sessions_files").on(t.id).where(sql`files > 0`),
  ],
);

/**
 * Terminal recordings (asciicast v2) shipped by nodes, keyed like the session they belong to.
 * Small (the built-in cowrie stops recording at its limit) and rare: kept in the database,
 * so retention and backups cover them with the events.
 */
export const sessionRecordings = sqliteTable(
  "session_recordings",
  {
    nodeId: text("node_id").notNull(),
    potId: text("pot_id").notNull(),
    session: text("session").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    data: blob("data", { mode: "buffer" }).notNull(),
    receivedAt: integer("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.potId, t.session] })],
);

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
