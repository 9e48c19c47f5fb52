/**
 * SQL for the registry of nodes and honeypots. Low rate (registrations, status changes), so
 * plain Drizzle queries; ids cross this boundary as bigint and are stored as decimal text.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "./index";
import { honeypots, nodes } from "./schema";
import type { RegistryStorage } from "./stores";

/** Where a sensor stands, as the operator set it (the attack map draws arcs to it). */
export interface NodeLocation {
  lat: number;
  lon: number;
  label: string | null;
}

export interface NodeRow {
  node_id: bigint;
  node_name: string;
  node_type: string;
  status: string;
  address: string | null;
  port: number | null;
  registered_at: number;
  last_seen: number;
  /** Not written by upsertNode (a registration does not move a sensor): setNodeLocation. */
  location?: NodeLocation | null;
}

export interface PotRow {
  node_id: bigint;
  pot_id: string;
  pot_type: string;
  status: string;
  message: string | null;
  updated_at: number;
}

export class RegistryStore implements RegistryStorage {
  constructor(private readonly db: Db) {}

  upsertNode(n: NodeRow): void {
    const row = {
      nodeId: n.node_id.toString(),
      nodeName: n.node_name,
      nodeType: n.node_type,
      status: n.status,
      address: n.address,
      port: n.port,
      registeredAt: n.registered_at,
      lastSeen: n.last_seen,
    };
    this.db.insert(nodes).values(row).onConflictDoUpdate({ target: nodes.nodeId, set: { ...row, registeredAt: sql`registered_at` } }).run();
  }

  setNodeStatus(nodeId: bigint, status: string, at: number): void {
    this.db.update(nodes).set({ status, lastSeen: at }).where(eq(nodes.nodeId, nodeId.toString())).run();
  }

  /** At start-up nobody is connected yet: every node is Unknown until it registers again. */
  markAllNodesUnknown(): void {
    this.db.update(nodes).set({ status: "Unknown" }).run();
  }

  setNodeLocation(nodeId: bigint, l: NodeLocation | null): void {
    this.db.update(nodes).set(locationColumns(l)).where(eq(nodes.nodeId, nodeId.toString())).run();
  }

  listNodes(): NodeRow[] {
    return this.db.select().from(nodes).orderBy(asc(nodes.registeredAt)).all().map(toNode);
  }

  upsertPot(p: PotRow): void {
    const row = { nodeId: p.node_id.toString(), potId: p.pot_id, potType: p.pot_type, status: p.status, message: p.message, updatedAt: p.updated_at };
    this.db.insert(honeypots).values(row).onConflictDoUpdate({ target: [honeypots.nodeId, honeypots.potId], set: row }).run();
  }

  deletePot(nodeId: bigint, potId: string): void {
    this.db.delete(honeypots).where(and(eq(honeypots.nodeId, nodeId.toString()), eq(honeypots.potId, potId))).run();
  }

  listPots(): PotRow[] {
    return this.db.select().from(honeypots).orderBy(asc(honeypots.nodeId), asc(honeypots.potId)).all().map(toPot);
  }
}

function toNode(r: typeof nodes.$inferSelect): NodeRow {
  return {
    node_id: BigInt(r.nodeId),
    node_name: r.nodeName,
    node_type: r.nodeType,
    status: r.status,
    address: r.address,
    port: r.port,
    registered_at: r.registeredAt,
    last_seen: r.lastSeen,
    location: locationOf(r),
  };
}

/** The nodes table's location columns for a location (all null: none). */
export function locationColumns(l: NodeLocation | null): { lat: number | null; lon: number | null; locationLabel: string | null } {
  return { lat: l?.lat ?? null, lon: l?.lon ?? null, locationLabel: l?.label ?? null };
}

export function locationOf(r: { lat: number | null; lon: number | null; locationLabel: string | null }): NodeLocation | null {
  return r.lat === null || r.lon === null ? null : { lat: r.lat, lon: r.lon, label: r.locationLabel };
}

function toPot(r: typeof honeypots.$inferSelect): PotRow {
  return { node_id: BigInt(r.nodeId), pot_id: r.potId, pot_type: r.potType, status: r.status, message: r.message, updated_at: r.updatedAt };
}
