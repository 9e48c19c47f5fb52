/**
 * The registry of nodes and honeypots on PostgreSQL: read whole at start (Core keeps the
 * registry in memory anyway, src/core/registry.ts), every change written through in order.
 */
import { and, asc, eq, sql } from "drizzle-orm";
import { locationColumns, locationOf, type NodeLocation, type NodeRow, type PotRow } from "../registry-store";
import type { RegistryStorage } from "../stores";
import type { PgDb } from "./index";
import { honeypots, nodes } from "./schema";
import type { WriteQueue } from "./write-queue";

export class PgRegistryStore implements RegistryStorage {
  private constructor(
    private readonly db: PgDb,
    private readonly writes: WriteQueue,
    private nodes: NodeRow[],
    private pots: PotRow[],
  ) {}

  static async open(db: PgDb, writes: WriteQueue): Promise<PgRegistryStore> {
    const ns = await db.select().from(nodes).orderBy(asc(nodes.registeredAt));
    const ps = await db.select().from(honeypots).orderBy(asc(honeypots.nodeId), asc(honeypots.potId));
    return new PgRegistryStore(
      db,
      writes,
      ns.map((r) => ({ node_id: BigInt(r.nodeId), node_name: r.nodeName, node_type: r.nodeType, status: r.status, address: r.address, port: r.port, registered_at: r.registeredAt, last_seen: r.lastSeen, location: locationOf(r) })),
      ps.map((r) => ({ node_id: BigInt(r.nodeId), pot_id: r.potId, pot_type: r.potType, status: r.status, message: r.message, updated_at: r.updatedAt })),
    );
  }

  upsertNode(n: NodeRow): void {
    const row = { nodeId: n.node_id.toString(), nodeName: n.node_name, nodeType: n.node_type, status: n.status, address: n.address, port: n.port, registeredAt: n.registered_at, lastSeen: n.last_seen };
    this.writes.push("node", () => this.db.insert(nodes).values(row).onConflictDoUpdate({ target: nodes.nodeId, set: { ...row, registeredAt: sql`${nodes.registeredAt}` } }));
  }

  setNodeStatus(nodeId: bigint, status: string, at: number): void {
    this.writes.push("node status", () => this.db.update(nodes).set({ status, lastSeen: at }).where(eq(nodes.nodeId, nodeId.toString())));
  }

  markAllNodesUnknown(): void {
    for (const n of this.nodes) n.status = "Unknown";
    this.writes.push("node status", () => this.db.update(nodes).set({ status: "Unknown" }));
  }

  setNodeLocation(nodeId: bigint, l: NodeLocation | null): void {
    this.writes.push("node location", () => this.db.update(nodes).set(locationColumns(l)).where(eq(nodes.nodeId, nodeId.toString())));
  }

  /** The rows read at start: the registry reads them once, then keeps its own. */
  listNodes(): NodeRow[] {
    return this.nodes;
  }

  upsertPot(p: PotRow): void {
    const row = { nodeId: p.node_id.toString(), potId: p.pot_id, potType: p.pot_type, status: p.status, message: p.message, updatedAt: p.updated_at };
    this.writes.push("honeypot", () => this.db.insert(honeypots).values(row).onConflictDoUpdate({ target: [honeypots.nodeId, honeypots.potId], set: row }));
  }

  deletePot(nodeId: bigint, potId: string): void {
    this.writes.push("honeypot", () => this.db.delete(honeypots).where(and(eq(honeypots.nodeId, nodeId.toString()), eq(honeypots.potId, potId))));
  }

  listPots(): PotRow[] {
    return this.pots;
  }
}
