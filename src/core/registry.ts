/**
 * The registry of nodes and honeypots: the live view (who is connected, through which
 * connection) kept in memory, every change written through to the store and published on
 * the bus. The command router asks it which connection holds a node.
 */
import type { Logger } from "../log";
import type { NodeLocation, NodeRow, PotRow } from "../db/registry-store";
import type { RegistryStorage } from "../db/stores";
import { RateLimitedLog } from "../net/rate-limited-log";
import type { NodeHealth, NodeRegistration, PotStatusUpdate } from "../protocol/messages";
import { EXTERNAL, NO_NODE, POT_ID_PATTERN } from "../protocol/types";
import type { MessageBus } from "./bus";
import type { PotSighting } from "./ingest/batch-sources";

const POT_ID = new RegExp(POT_ID_PATTERN);
/**
 * External pots come from what senders claim: a sender inventing pot ids must not grow the
 * registry (every node page, every list) without bound. Past this, new ones are only logged.
 */
const MAX_EXTERNAL_POTS = 10_000;
/** Removals remembered, so that a removed pot's late events do not bring it back (oldest forgotten first). */
const MAX_REMOVALS = 10_000;

/** A pot's status as the registry shows it: a node's PotStatusUpdate, or Core's External. */
type PotState = Omit<PotStatusUpdate, "status"> & { status: string };

/** A node's live connection, as the registry and the command router see it. */
export interface NodeLink {
  readonly remoteAddress: string;
  send(kind: "NodeCommand" | "RegistrationAck" | "SessionRecordingAck" | "Error" | "FileStatus", payload: unknown): boolean;
  close(reason: string): void;
}

interface LiveNode {
  row: NodeRow;
  link: NodeLink | null;
  /** NodeRegistration `catalogue`: the fingerprint of the node's default catalogue, if it gave one. */
  catalogue?: string;
  /** The last heartbeat (NodeStatusUpdate) on this instance, and the figures it carried: memory only. */
  beat?: NodeBeat;
}

/** A node's last heartbeat: when it came, and the last figures the node sent with one (docs/protocol.md). */
export interface NodeBeat {
  at: number;
  health: NodeHealth | null;
  healthAt: number | null;
}

export class Registry {
  private nodes = new Map<bigint, LiveNode>();
  private pots = new Map<string, PotRow>();
  /** pot_id -> node_id, to stamp events that arrive without a node_id. */
  private potOwner = new Map<string, bigint>();
  /** Keys of the External pots, to bound them. */
  private external = new Set<string>();
  /** When each removed pot left the registry (key -> ms), oldest first. */
  private removedAt = new Map<string, number>();
  private readonly warn: RateLimitedLog;
  private watchdog: ReturnType<typeof setInterval> | null = null;
  /** Moves on every change, so readers can cache what they built from the registry. */
  version = 0;

  constructor(
    private readonly store: RegistryStorage,
    private readonly bus: MessageBus,
    private readonly logger: Logger,
    private readonly heartbeatTimeoutMs: number,
    /** Alone, no node is connected at start; in a cluster other instances hold theirs (presence decides). */
    shared = false,
  ) {
    this.warn = new RateLimitedLog(logger);
    if (!shared) store.markAllNodesUnknown();
    for (const row of store.listNodes()) this.nodes.set(row.node_id, { row, link: null });
    for (const pot of store.listPots()) this.setPot(pot);
    this.watchdog = setInterval(() => this.expireSilentNodes(), Math.min(heartbeatTimeoutMs, 5000));
    this.watchdog.unref?.();
  }

  stop(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  register(reg: NodeRegistration, link: NodeLink): void {
    const now = Date.now();
    const existing = this.nodes.get(reg.node_id);
    if (existing?.link && existing.link !== link) {
      this.logger.warn({ node_id: reg.node_id.toString(), old: existing.link.remoteAddress, new: link.remoteAddress }, "node registered again; replacing its old connection");
      existing.link.close("replaced by a newer registration of the same node_id");
    }
    const row: NodeRow = {
      node_id: reg.node_id,
      node_name: reg.node_name,
      node_type: reg.node_type,
      status: "Connected",
      address: reg.address ?? link.remoteAddress,
      port: reg.port ?? null,
      registered_at: existing?.row.registered_at ?? now,
      last_seen: now,
      location: existing?.row.location ?? null,
    };
    this.nodes.set(reg.node_id, { row, link, catalogue: reg.catalogue });
    this.version++;
    this.store.upsertNode(row);
    const catalogue = reg.catalogue ? { catalogue: reg.catalogue } : {};
    this.bus.publish("NodeRegistration", { node_id: reg.node_id, node_name: reg.node_name, address: row.address, port: row.port, node_type: reg.node_type, ...catalogue }, { node_id: reg.node_id });
  }

  /** Any message from a node proves it alive. */
  touch(nodeId: bigint): void {
    const n = this.nodes.get(nodeId);
    if (n) n.row.last_seen = Date.now();
  }

  /** A NodeStatusUpdate from the node: a heartbeat, with its figures when it sent some (an older node does not). */
  heartbeat(nodeId: bigint, health: NodeHealth | undefined): void {
    const n = this.nodes.get(nodeId);
    if (!n) return;
    const at = Date.now();
    n.beat = health ? { at, health, healthAt: at } : { at, health: n.beat?.health ?? null, healthAt: n.beat?.healthAt ?? null };
  }

  /** The node's last heartbeat on this instance; null before the first (or when another instance holds it). */
  beatOf(nodeId: bigint): NodeBeat | null {
    return this.nodes.get(nodeId)?.beat ?? null;
  }

  setNodeStatus(nodeId: bigint, status: string): void {
    const n = this.nodes.get(nodeId);
    if (!n) return;
    n.row.last_seen = Date.now();
    const changed = n.row.status !== status;
    n.row.status = status;
    if (changed) {
      this.version++;
      this.store.setNodeStatus(nodeId, status, n.row.last_seen);
    }
    this.bus.publish("NodeStatusUpdate", { node_id: nodeId, status }, { node_id: nodeId });
  }

  /** Where the operator says the node stands (null: unknown); false when the node is not registered. */
  setLocation(nodeId: bigint, location: NodeLocation | null): boolean {
    const n = this.nodes.get(nodeId);
    if (!n) return false;
    n.row.location = location;
    this.version++;
    this.store.setNodeLocation(nodeId, location);
    return true;
  }

  updatePot(u: PotStatusUpdate): void {
    this.store.upsertPot(this.showPot(u));
  }

  /**
   * Pots named by a committed batch's events, once per batch and distinct source: a (node, pot)
   * the registry does not know becomes an External pot with the kind its events name; a known
   * one keeps what its node reported. Events from before a pot's removal do not bring it back:
   * a node's spool may deliver them after the RemovePot's result.
   */
  sighted(sightings: readonly PotSighting[], newest: (s: PotSighting) => number): void {
    for (const s of sightings) {
      if (s.potId === null) continue;
      const key = `${s.nodeId ?? NO_NODE}/${s.potId}`;
      if (this.pots.has(key) || !POT_ID.test(s.potId)) continue;
      const removed = this.removedAt.get(key);
      if (removed !== undefined && newest(s) <= removed) continue;
      if (this.external.size >= MAX_EXTERNAL_POTS) {
        this.warn.warn("external-cap", { pot_id: s.potId, node_id: s.nodeId }, `${MAX_EXTERNAL_POTS} External pots are registered; events of further unknown pots are stored, their pots not registered`);
        continue;
      }
      const nodeId = s.nodeId === null ? NO_NODE : BigInt(s.nodeId);
      const message =
        nodeId === NO_NODE
          ? "its events come straight to Core's event socket and name no node; Core did not install it"
          : "its events name this node (sent to its relay, or with its node_id), which did not install it";
      this.store.upsertPot(this.showPot({ node_id: nodeId, pot_id: s.potId, pot_type: s.potType ?? "unknown", status: EXTERNAL, message }));
      this.logger.info({ node_id: nodeId.toString(), pot_id: s.potId, pot_type: s.potType }, "events of a pot no node reported: registered it as External");
    }
  }

  /** A pot its node removed (RemovePot), or an External pot removed by an operator: gone from the registry; its events stay. */
  removePot(nodeId: bigint, potId: string): void {
    if (!this.forgetPot(nodeId, potId)) return;
    this.store.deletePot(nodeId, potId);
    this.bus.publish("PotRemoved", { node_id: nodeId, pot_id: potId }, { node_id: nodeId, pot_id: potId });
  }

  /** NodeDrop: a graceful goodbye. */
  dropped(nodeId: bigint, link: NodeLink): void {
    const n = this.nodes.get(nodeId);
    if (!n || n.link !== link) return;
    n.link = null;
    this.setNodeStatus(nodeId, "Stopped");
    this.bus.publish("NodeDrop", null, { node_id: nodeId });
  }

  /** The connection closed without a NodeDrop. */
  disconnected(nodeId: bigint, link: NodeLink): void {
    const n = this.nodes.get(nodeId);
    if (!n || n.link !== link) return;
    n.link = null;
    if (n.row.status !== "Stopped") this.setNodeStatus(nodeId, "Unknown");
  }

  // ---- Changes made by another instance (src/cluster/bridge.ts) --------------------
  // They change the view in memory and go to this instance's live feed; the instance that
  // made them has written them to the store already.

  /** A node registered with another instance: it holds the connection. */
  applyRemoteRegistration(reg: { node_id: bigint; node_name: string; node_type: string; address: string; port: number | null; catalogue?: string }): void {
    const existing = this.nodes.get(reg.node_id);
    // This instance held the node until now: the node has moved (fail-over), its old connection is stale.
    if (existing?.link) {
      existing.link.close("the node registered with another instance");
      existing.link = null;
    }
    const now = Date.now();
    const { catalogue, ...fields } = reg;
    const row: NodeRow = { ...fields, status: "Connected", registered_at: existing?.row.registered_at ?? now, last_seen: now, location: existing?.row.location ?? null };
    this.nodes.set(reg.node_id, { row, link: null, catalogue });
    this.version++;
    this.bus.publish("NodeRegistration", reg, { node_id: reg.node_id });
  }

  /** A node's status as another instance (or presence) saw it; `write` also stores it (presence: its holder is gone). */
  applyRemoteStatus(nodeId: bigint, status: string, write = false): void {
    const n = this.nodes.get(nodeId);
    if (!n || n.link) return;
    if (n.row.status !== status) {
      n.row.status = status;
      this.version++;
      if (write) this.store.setNodeStatus(nodeId, status, Date.now());
    }
    n.row.last_seen = Date.now();
    this.bus.publish("NodeStatusUpdate", { node_id: nodeId, status }, { node_id: nodeId });
  }

  applyRemotePot(u: PotStatusUpdate): void {
    this.showPot(u);
  }

  applyRemotePotRemoved(nodeId: bigint, potId: string): void {
    this.forgetPot(nodeId, potId);
  }

  applyRemoteDrop(nodeId: bigint): void {
    this.bus.publish("NodeDrop", null, { node_id: nodeId });
  }

  /** Nodes whose control connection is on this instance (presence). */
  heldNodes(): bigint[] {
    const out: bigint[] = [];
    for (const [id, n] of this.nodes) if (n.link) out.push(id);
    return out;
  }

  private expireSilentNodes(): void {
    const cutoff = Date.now() - this.heartbeatTimeoutMs;
    for (const [id, n] of this.nodes) {
      if (n.link && n.row.last_seen < cutoff && n.row.status !== "Unknown") {
        this.logger.warn({ node_id: id.toString() }, "node missed its heartbeats; marking it Unknown");
        this.setNodeStatus(id, "Unknown");
      }
    }
  }

  link(nodeId: bigint): NodeLink | null {
    return this.nodes.get(nodeId)?.link ?? null;
  }

  hasNode(nodeId: bigint): boolean {
    return this.nodes.has(nodeId);
  }

  /** The fingerprint of the node's default catalogue from its registration; null when it gave none. */
  catalogueOf(nodeId: bigint): string | null {
    return this.nodes.get(nodeId)?.catalogue ?? null;
  }

  node(nodeId: bigint): NodeRow | null {
    return this.nodes.get(nodeId)?.row ?? null;
  }

  listNodes(): NodeRow[] {
    return [...this.nodes.values()].map((n) => n.row);
  }

  listPots(nodeId?: bigint): PotRow[] {
    const all = [...this.pots.values()];
    return nodeId === undefined ? all : all.filter((p) => p.node_id === nodeId);
  }

  pot(nodeId: bigint, potId: string): PotRow | null {
    return this.pots.get(`${nodeId}/${potId}`) ?? null;
  }

  nodeOfPot(potId: string): bigint | null {
    return this.potOwner.get(potId) ?? null;
  }

  /** The kind of a pot: the node's pot of that id, or (no node given) its last owner's. */
  potTypeOf(nodeId: bigint | null, potId: string): string | null {
    const owner = nodeId ?? this.potOwner.get(potId);
    return owner === undefined ? null : (this.pots.get(`${owner}/${potId}`)?.pot_type ?? null);
  }

  get connectedCount(): number {
    let n = 0;
    for (const v of this.nodes.values()) if (v.link) n++;
    return n;
  }

  /** A pot's status in the view and on the bus; returns its row. */
  private showPot(u: PotState): PotRow {
    const row: PotRow = { node_id: u.node_id, pot_id: u.pot_id, pot_type: u.pot_type, status: u.status, message: u.message ?? null, updated_at: Date.now() };
    this.setPot(row);
    this.bus.publish("PotStatusUpdate", { node_id: u.node_id, pot_id: u.pot_id, pot_type: u.pot_type, status: u.status, ...(u.message ? { message: u.message } : {}) }, { node_id: u.node_id, pot_id: u.pot_id });
    return row;
  }

  /** Takes a pot out of the view; false when it was not in it. */
  private forgetPot(nodeId: bigint, potId: string): boolean {
    const key = `${nodeId}/${potId}`;
    if (!this.pots.delete(key)) return false;
    this.version++;
    this.external.delete(key);
    this.removedAt.delete(key);
    this.removedAt.set(key, Date.now());
    if (this.removedAt.size > MAX_REMOVALS) this.removedAt.delete(this.removedAt.keys().next().value!);
    if (this.potOwner.get(potId) === nodeId) this.potOwner.delete(potId);
    return true;
  }

  private setPot(p: PotRow): void {
    this.version++;
    const key = `${p.node_id}/${p.pot_id}`;
    this.pots.set(key, p);
    if (p.status === EXTERNAL) this.external.add(key);
    else this.external.delete(key);
    // Events that name no node stay without one: a pot of no node owns nothing.
    if (p.node_id !== NO_NODE) this.potOwner.set(p.pot_id, p.node_id);
  }
}
