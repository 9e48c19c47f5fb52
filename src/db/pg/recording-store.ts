/**
 * Terminal recordings on PostgreSQL (see ../recording-store.ts): every instance of a cluster
 * serves a recording whichever instance the node sent it to.
 */
import { and, eq } from "drizzle-orm";
import type { Recording, RecordingStorage } from "../recording-store";
import type { PgDb } from "./index";
import { sessionRecordings } from "./schema";

export class PgRecordingStore implements RecordingStorage {
  constructor(private readonly db: PgDb) {}

  async save(nodeId: bigint, potId: string, session: string, data: Buffer, sha256: string, now = Date.now()): Promise<void> {
    const row = { nodeId: nodeId.toString(), potId, session, size: data.length, sha256, data, receivedAt: now };
    await this.db
      .insert(sessionRecordings)
      .values(row)
      .onConflictDoUpdate({ target: [sessionRecordings.nodeId, sessionRecordings.potId, sessionRecordings.session], set: { size: row.size, sha256, data, receivedAt: now } });
  }

  async get(nodeId: bigint, potId: string, session: string): Promise<Recording | null> {
    const [r] = await this.db
      .select({ size: sessionRecordings.size, sha256: sessionRecordings.sha256, data: sessionRecordings.data, receivedAt: sessionRecordings.receivedAt })
      .from(sessionRecordings)
      .where(and(eq(sessionRecordings.nodeId, nodeId.toString()), eq(sessionRecordings.potId, potId), eq(sessionRecordings.session, session)));
    return r ? { ...r, data: Buffer.from(r.data) } : null;
  }
}
