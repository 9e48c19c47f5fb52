/**
 * The PostgreSQL schema: the same tables as the SQLite store (../schema.ts, which says why
 * each exists), in PostgreSQL's types. Migrations: `npm run db:generate:pg` into drizzle/pg/.
 *
 * Times are epoch milliseconds in bigint columns (as in SQLite), node ids exact decimal text.
 * `events` is partitioned by range of `ts`, one partition per UTC day (docs/scale-out.md):
 * drizzle-kit cannot declare that, so its migration (drizzle/pg/0000_*.sql) adds the
 * `PARTITION BY RANGE (ts)` clause and the default partition by hand.
 */
import { sql } from "drizzle-orm";
import { bigint, bigserial, customType, doublePrecision, index, integer, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({ dataType: () => "bytea" });
const ms = (name: string) => bigint(name, { mode: "number" });

export const nodes = pgTable("nodes", {
  nodeId: text("node_id").primaryKey(),
  nodeName: text("node_name").notNull(),
  nodeType: text("node_type").notNull(),
  status: text("status").notNull(),
  address: text("address"),
  port: integer("port"),
  registeredAt: ms("registered_at").notNull(),
  lastSeen: ms("last_seen").notNull(),
  lat: doublePrecision("lat"),
  lon: doublePrecision("lon"),
  locationLabel: text("location_label"),
});

export const honeypots = pgTable(
  "honeypots",
  {
    nodeId: text("node_id").notNull(),
    potId: text("pot_id").notNull(),
    potType: text("pot_type").notNull(),
    status: text("status").notNull(),
    message: text("message"),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.potId] }), index("honeypots_pot_id").on(t.potId)],
);

export const commands = pgTable(
  "commands",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    commandId: text("command_id").notNull().unique(),
    nodeId: text("node_id").notNull(),
    name: text("name").notNull(),
    potId: text("pot_id"),
    body: text("body").notNull(),
    status: text("status").notNull(),
    message: text("message"),
    data: text("data"),
    source: text("source").notNull(),
    principal: text("principal"),
    remoteAddr: text("remote_addr"),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("commands_node").on(t.nodeId, t.id)],
);

/**
 * Partitioned by day of `ts` (see the file header). Indexes, per partition: a B-tree on `id`
 * (ids only grow, so every insert lands on the rightmost leaf: the cost of SQLite's rowid,
 * and what pages by cursor) and a BRIN on `ts` (a few pages per partition, for `since` and
 * `until`). Nothing keyed by address, type or source: those filters go through the
 * per-segment summaries, as in SQLite.
 */
export const events = pgTable(
  "events",
  {
    id: ms("id").notNull(),
    ts: ms("ts").notNull(),
    sourceId: integer("source_id").notNull(),
    typeId: integer("type_id").notNull(),
    srcIp: text("src_ip"),
    data: text("data").notNull(),
  },
  (t) => [index("events_id").on(t.id), index("events_ts").using("brin", t.ts)],
);

/**
 * Unique by natural key (nulls equal): the writers of a cluster map each ingest instance's own
 * source ids to these by value (cluster/writer-role.ts).
 */
export const eventSources = pgTable(
  "event_sources",
  {
    id: integer("id").primaryKey(),
    nodeId: text("node_id"),
    potId: text("pot_id"),
    potType: text("pot_type"),
  },
  (t) => [unique("event_sources_natural").on(t.nodeId, t.potId, t.potType).nullsNotDistinct()],
);

/**
 * The idempotency key of every stored event of a cluster, made of its sender and its position
 * in that sender's stream (core/ingest/sender-keys.ts), never of its content: a writer inserts
 * a batch's keys first and stores only the events whose key was new, so a batch delivered
 * twice, or a node's spool sent again, is stored once. `ts` is the event's time, for
 * retention; a BRIN index keeps deleting by it cheap on the insert path.
 */
export const eventKeys = pgTable(
  "event_keys",
  {
    key: bigint("key", { mode: "bigint" }).primaryKey(),
    ts: ms("ts").notNull(),
  },
  (t) => [index("event_keys_ts").using("brin", t.ts)],
);

export const eventTypes = pgTable("event_types", {
  id: integer("id").primaryKey(),
  name: text("name").notNull().unique(),
});

export const eventSegments = pgTable("event_segments", {
  seg: ms("seg").primaryKey(),
  minTs: ms("min_ts").notNull(),
  maxTs: ms("max_ts").notNull(),
  count: integer("count").notNull(),
  ipBloom: bytea("ip_bloom").notNull(),
});

export const eventSegmentKeys = pgTable(
  "event_segment_keys",
  {
    kind: text("kind").notNull(),
    value: integer("value").notNull(),
    seg: ms("seg").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.value, t.seg] })],
);

export const eventCounts = pgTable(
  "event_counts",
  {
    kind: text("kind").notNull(),
    bucket: integer("bucket").notNull(),
    key: text("key").notNull(),
    count: ms("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.bucket, t.key] })],
);

export const eventCountsDaily = pgTable(
  "event_counts_daily",
  {
    kind: text("kind").notNull(),
    day: integer("day").notNull(),
    key: text("key").notNull(),
    count: ms("count").notNull(),
  },
  (t) => [primaryKey({ columns: [t.kind, t.day, t.key] })],
);

export const eventMeta = pgTable("event_meta", {
  key: text("key").primaryKey(),
  value: ms("value").notNull(),
});

export const nodeSecrets = pgTable("node_secrets", {
  nodeId: text("node_id").primaryKey(),
  secret: text("secret").notNull(),
  controlStep: ms("control_step").notNull().default(0),
  eventsStep: ms("events_step").notNull().default(0),
  createdAt: ms("created_at").notNull(),
});

/** Where each reader of the stored events has got to (outputs, rules): ../schema.ts says why. */
export const readerPositions = pgTable("reader_positions", {
  reader: text("reader").primaryKey(),
  position: ms("position").notNull(),
  updatedAt: ms("updated_at").notNull(),
});

export const outputs = pgTable("outputs", {
  name: text("name").primaryKey(),
  type: text("type").notNull(),
  definition: text("definition").notNull(),
  createdAt: ms("created_at").notNull(),
});

export const alertRules = pgTable("alert_rules", {
  name: text("name").primaryKey(),
  definition: text("definition").notNull(),
  createdAt: ms("created_at").notNull(),
});

export const ruleSeen = pgTable(
  "rule_seen",
  {
    rule: text("rule").notNull(),
    value: text("value").notNull(),
  },
  (t) => [primaryKey({ columns: [t.rule, t.value] })],
);

/** What the enrichment found for each source address, written where events are written. */
export const eventAddresses = pgTable(
  "event_addresses",
  {
    ip: text("ip").primaryKey(),
    country: text("country"),
    asn: integer("asn"),
    asOrg: text("as_org"),
    firstSeen: ms("first_seen").notNull(),
  },
  (t) => [index("event_addresses_country").on(t.country), index("event_addresses_asn").on(t.asn)],
);

/**
 * Attack sessions, one row per (event source, session). Unlike SQLite's single writer, several
 * writers of a cluster may add to one session: the row is found by its natural key, and each
 * batch's delta is added to it by an upsert.
 */
export const sessions = pgTable(
  "sessions",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    sourceId: integer("source_id").notNull(),
    session: text("session").notNull(),
    srcIp: text("src_ip"),
    startTs: ms("start_ts").notNull(),
    endTs: ms("end_ts").notNull(),
    firstEventId: ms("first_event_id").notNull(),
    lastEventId: ms("last_event_id").notNull(),
    events: integer("events").notNull(),
    loginSuccess: integer("login_success").notNull().default(0),
    username: text("username"),
    password: text("password"),
    commands: integer("commands").notNull().default(0),
    files: integer("files").notNull().default(0),
    ttylog: integer("ttylog").notNull().default(0),
    closed: integer("closed").notNull().default(0),
    segs: text("segs").notNull(),
  },
  (t) => [
    unique("sessions_natural").on(t.sourceId, t.session),
    index("sessions_start").on(t.startTs),
    index("sessions_login").on(t.id).where(sql`login_success = 1`),
    index("sessions_commands").on(t.id).where(sql`commands > 0`),
    index("sessions_files").on(t.id).where(sql`files > 0`),
  ],
);

export const sessionRecordings = pgTable(
  "session_recordings",
  {
    nodeId: text("node_id").notNull(),
    potId: text("pot_id").notNull(),
    session: text("session").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    data: bytea("data").notNull(),
    receivedAt: ms("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.nodeId, t.potId, t.session] })],
);

export const artifacts = pgTable("artifacts", {
  sha256: text("sha256").primaryKey(),
  size: ms("size").notNull(),
  mime: text("mime"),
  ext: text("ext"),
  stored: integer("stored").notNull(),
  firstSeen: ms("first_seen").notNull(),
  lastSeen: ms("last_seen").notNull(),
});

export const artifactSightings = pgTable(
  "artifact_sightings",
  {
    id: text("id").primaryKey(),
    sha256: text("sha256").notNull(),
    nodeId: text("node_id").notNull(),
    potId: text("pot_id"),
    source: text("source"),
    session: text("session"),
    url: text("url"),
    filename: text("filename"),
    truncated: integer("truncated").notNull(),
    seenAt: ms("seen_at").notNull(),
  },
  (t) => [index("artifact_sightings_sha256").on(t.sha256), index("artifact_sightings_session").on(t.session)],
);

/**
 * The artifacts' bytes on PostgreSQL, in chunks: every instance of a cluster reads them where
 * it reads everything else (docs/scale-out.md says why not JetStream's object store), and a
 * download streams them a chunk at a time rather than holding a whole file.
 */
export const artifactChunks = pgTable(
  "artifact_chunks",
  {
    sha256: text("sha256").notNull(),
    seq: integer("seq").notNull(),
    data: bytea("data").notNull(),
  },
  (t) => [primaryKey({ columns: [t.sha256, t.seq] })],
);
