/**
 * The database schema: the single source for migrations (drizzle-kit) and queries.
 *
 * node_id is a u64 and SQLite integers are signed 64-bit, so ids are stored as their exact
 * decimal text; they are compared for equality only, never ordered.
 */
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

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
    source: text("source").notNull(),
    principal: text("principal"),
    remoteAddr: text("remote_addr"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("commands_node").on(t.nodeId, t.id)],
);

/**
 * Events. Designed together with the ingest rate (DESIGN.md, measured facts): every per-event
 * index entry costs the single writer about 1 µs, and one keyed by source IP dirties a
 * different page per event (15x slower with a million rows present). So:
 *
 * - `id` is assigned by the one writer in arrival order; it is the pagination cursor and,
 *   shifted right by 12, the segment (4096 consecutive ids) that the other structures use.
 * - node/pot/kind and the event type are small-int dictionary ids (`event_sources`,
 *   `event_types`): narrow rows, and filters on them are resolved to ids first.
 * - the only per-event index is `events_seg_ip` on (id >> 12, src_ip): a source-IP index
 *   partitioned by segment. New entries land in the newest segment's few pages instead of
 *   all over the index, and a lookup is one seek per segment.
 * - time, event type and source are answered through per-segment summaries written once
 *   per batch (`event_segments`: time range and count; `event_segment_keys`: which types and
 *   sources occur), so a query scans only the segments that can match.
 * - the stats' top-N lists come from hourly counters (`event_counts`), aggregated in memory
 *   by the writer and flushed about once a second with a watermark (`event_meta`) so that
 *   a crash recounts from the events themselves.
 */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey(),
    ts: integer("ts").notNull(),
    sourceId: integer("source_id").notNull(),
    typeId: integer("type_id").notNull(),
    srcIp: text("src_ip"),
    data: text("data").notNull(),
  },
  (t) => [index("events_seg_ip").on(sql`("id" >> 12)`, t.srcIp)],
);

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

/** Per segment (4096 ids): the time range of its events and how many there are. */
export const eventSegments = sqliteTable("event_segments", {
  seg: integer("seg").primaryKey(),
  minTs: integer("min_ts").notNull(),
  maxTs: integer("max_ts").notNull(),
  count: integer("count").notNull(),
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
