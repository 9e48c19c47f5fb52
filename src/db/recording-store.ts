/**
 * Terminal recordings as nodes send them (src/core/transfer/recording-receiver.ts), one per honeypot
 * session, read back by the sessions API. One row holds a whole recording: they are small
 * (kilobytes to a few MiB) and always read whole. PostgreSQL: ./pg/recording-store.ts.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "./index";
import { sessionRecordings } from "./schema";
import type { MaybePromise } from "./stores";

export interface Recording {
  size: number;
  sha256: string;
  data: Buffer;
  receivedAt: number;
}

export interface RecordingStorage {
  /** Stores a recording a node sent (a second copy of the same one replaces the first). */
  save(nodeId: bigint, potId: string, session: string, data: Buffer, sha256: string, now?: number): MaybePromise<void>;
  get(nodeId: bigint, potId: string, session: string): MaybePromise<Recording | null>;
}

export class RecordingStore implements RecordingStorage {
  constructor(private readonly db: Db) {}

  save(nodeId: bigint, potId: string, session: string, data: Buffer, sha256: string, now = Date.now()): void {
    const row = { nodeId: nodeId.toString(), potId, session, size: data.length, sha256, data, receivedAt: now };
    this.db
      .insert(sessionRecordings)
      .values(row)
      .onConflictDoUpdate({ target: [sessionRecordings.nodeId, sessionRecordings.potId, sessionRecordings.session], set: { size: row.size, sha256, data, receivedAt: now } })
      .run();
  }

  get(nodeId: bigint, potId: string, session: string): Recording | null {
    const r = this.db
      .select({ size: sessionRecordings.size, sha256: sessionRecordings.sha256, data: sessionRecordings.data, receivedAt: sessionRecordings.receivedAt })
      .from(sessionRecordings)
      .where(and(eq(sessionRecordings.nodeId, nodeId.toString()), eq(sessionRecordings.potId, potId), eq(sessionRecordings.session, session)))
      .get();
    return r ?? null;
  }
}
