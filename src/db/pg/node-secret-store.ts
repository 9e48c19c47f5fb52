/**
 * Node authentication secrets on PostgreSQL, read and written on every check (no copy in
 * memory): a node enrolled through one instance is known to every other at once, and the
 * conditional update lets one instance only take a step, so a code accepted by one is a replay
 * on the others. Registrations are rare next to events (a node's start, a reconnection), so a
 * round trip or two each costs little.
 */
import { and, eq, lt } from "drizzle-orm";
import type { AuthChannel, NodeSecret, NodeSecretStore } from "../node-secret-store";
import type { PgDb } from "./index";
import { nodeSecrets } from "./schema";

export class PgNodeSecretStore implements NodeSecretStore {
  constructor(private readonly db: PgDb) {}

  async get(nodeId: bigint): Promise<NodeSecret | null> {
    const [r] = await this.db.select().from(nodeSecrets).where(eq(nodeSecrets.nodeId, nodeId.toString()));
    return r ? { secret: r.secret, control_step: r.controlStep, events_step: r.eventsStep } : null;
  }

  async create(nodeId: bigint, secret: string): Promise<boolean> {
    const rows = await this.db.insert(nodeSecrets).values({ nodeId: nodeId.toString(), secret, createdAt: Date.now() }).onConflictDoNothing().returning({ nodeId: nodeSecrets.nodeId });
    return rows.length > 0;
  }

  async claimStep(nodeId: bigint, channel: AuthChannel, step: number): Promise<boolean> {
    const [column, set] = channel === "control" ? [nodeSecrets.controlStep, { controlStep: step }] : [nodeSecrets.eventsStep, { eventsStep: step }];
    const rows = await this.db.update(nodeSecrets).set(set).where(and(eq(nodeSecrets.nodeId, nodeId.toString()), lt(column, step))).returning({ nodeId: nodeSecrets.nodeId });
    return rows.length > 0;
  }
}
