/**
 * SQL for node authentication secrets.
 */
import { and, eq, lt } from "drizzle-orm";
import type { Db } from "./index";
import { nodeSecrets } from "./schema";

export type AuthChannel = "control" | "events";

type MaybePromise<T> = T | Promise<T>;

export interface NodeSecret {
  secret: string;
  control_step: number;
  events_step: number;
}

/** Where per-node secrets and the last accepted step of each channel live (the database). */
export interface NodeSecretStore {
  get(nodeId: bigint): MaybePromise<NodeSecret | null>;
  /** Stores a new node's secret; false when that node_id is enrolled already (by another instance meanwhile). */
  create(nodeId: bigint, secret: string): MaybePromise<boolean>;
  /** Records `step` as the channel's last accepted one if it is later than the stored one; false when it is not (a replay). */
  claimStep(nodeId: bigint, channel: AuthChannel, step: number): MaybePromise<boolean>;
}

export class SqlNodeSecretStore implements NodeSecretStore {
  constructor(private readonly db: Db) {}

  get(nodeId: bigint) {
    const r = this.db.select().from(nodeSecrets).where(eq(nodeSecrets.nodeId, nodeId.toString())).get();
    return r ? { secret: r.secret, control_step: r.controlStep, events_step: r.eventsStep } : null;
  }

  create(nodeId: bigint, secret: string): boolean {
    return this.db.insert(nodeSecrets).values({ nodeId: nodeId.toString(), secret, createdAt: Date.now() }).onConflictDoNothing().returning({ nodeId: nodeSecrets.nodeId }).all().length > 0;
  }

  claimStep(nodeId: bigint, channel: AuthChannel, step: number): boolean {
    const [column, set] = channel === "control" ? [nodeSecrets.controlStep, { controlStep: step }] : [nodeSecrets.eventsStep, { eventsStep: step }];
    return this.db.update(nodeSecrets).set(set).where(and(eq(nodeSecrets.nodeId, nodeId.toString()), lt(column, step))).returning({ nodeId: nodeSecrets.nodeId }).all().length > 0;
  }
}
