/**
 * Node authentication secrets on PostgreSQL: held in memory (a TOTP check is synchronous and
 * on the registration path), loaded at start and written through in order.
 */
import { eq } from "drizzle-orm";
import type { AuthChannel, NodeSecretStore } from "../stores";
import type { PgDb } from "./index";
import { nodeSecrets } from "./schema";
import type { WriteQueue } from "./write-queue";

type Known = { secret: string; control_step: number; events_step: number };

export class PgNodeSecretStore implements NodeSecretStore {
  private constructor(
    private readonly db: PgDb,
    private readonly writes: WriteQueue,
    private readonly known: Map<bigint, Known>,
  ) {}

  static async open(db: PgDb, writes: WriteQueue): Promise<PgNodeSecretStore> {
    const rows = await db.select().from(nodeSecrets);
    return new PgNodeSecretStore(db, writes, new Map(rows.map((r) => [BigInt(r.nodeId), { secret: r.secret, control_step: r.controlStep, events_step: r.eventsStep }])));
  }

  get(nodeId: bigint): Known | null {
    const k = this.known.get(nodeId);
    return k ? { ...k } : null;
  }

  create(nodeId: bigint, secret: string): void {
    this.known.set(nodeId, { secret, control_step: 0, events_step: 0 });
    const createdAt = Date.now();
    this.writes.push("node secret", () => this.db.insert(nodeSecrets).values({ nodeId: nodeId.toString(), secret, createdAt }));
  }

  setStep(nodeId: bigint, channel: AuthChannel, step: number): void {
    const k = this.known.get(nodeId);
    if (k) k[channel === "control" ? "control_step" : "events_step"] = step;
    const set = channel === "control" ? { controlStep: step } : { eventsStep: step };
    this.writes.push("node secret", () => this.db.update(nodeSecrets).set(set).where(eq(nodeSecrets.nodeId, nodeId.toString())));
  }
}
