/**
 * The database schema: the single source for migrations (drizzle-kit) and queries.
 *
 * node_id is a u64 and SQLite integers are signed 64-bit, so ids are stored as their exact
 * decimal text; they are compared for equality only, never ordered.
 */
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
 * Events. `id` is the insertion order and the pagination cursor. Secondary indexes are the
 * main cost of ingestion (see DESIGN.md's measured facts), so each one here is paid for by
 * a query the REST API serves.
 */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey(),
    ts: integer("ts").notNull(),
    nodeId: text("node_id"),
    potId: text("pot_id"),
    potType: text("pot_type"),
    eventType: text("event_type").notNull(),
    srcIp: text("src_ip"),
    data: text("data").notNull(),
  },
  (t) => [index("events_ts").on(t.ts)],
);
