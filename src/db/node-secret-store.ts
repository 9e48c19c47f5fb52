/**
 * SQL for node authentication secrets.
 */
import { eq } from "drizzle-orm";
import type { AuthChannel, NodeSecretStore } from "../core/auth/node-auth";
import type { Db } from "./index";
import { nodeSecrets } from "./schema";

export class SqlNodeSecretStore implements NodeSecretStore {
  constructor(private readonly db: Db) {}

  get(nodeId: bigint) {
    const r = this.db.select().from(nodeSecrets).where(eq(nodeSecrets.nodeId, nodeId.toString())).get();
    return r ? { secret: r.secret, control_step: r.controlStep, events_step: r.eventsStep } : null;
  }

  create(nodeId: bigint, secret: string): void {
    this.db.insert(nodeSecrets).values({ nodeId: nodeId.toString(), secret, createdAt: Date.now() }).run();
  }

  setStep(nodeId: bigint, channel: AuthChannel, step: number): void {
    const set = channel === "control" ? { controlStep: step } : { eventsStep: step };
    this.db.update(nodeSecrets).set(set).where(eq(nodeSecrets.nodeId, nodeId.toString())).run();
  }
}
