/**
 * The PostgreSQL schema: the same tables as the SQLite store (../schema.ts, which says why
 * each exists), in PostgreSQL's types. Migrations: `npm run db:generate:pg` into drizzle/pg/.
 *
 * Times are epoch milliseconds in bigint columns (as in SQLite), node ids exact decimal text.
 * `events` is partitioned by range of `ts`, one partition per UTC day (docs/scale-out.md):
 * drizzle-kit cannot declare that, so its migration (drizzle/pg/0000_*.sql) adds the
 * `PARTITION BY RANGE (ts)` clause and the default partition by hand.
 */
import { bigint, bigserial, customType, index, integer, pgTable, primaryKey, text, unique } from "drizzle-orm/pg-core";

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
