/**
 * What outputs and alert rules keep in the SQLite database (./output-storage.ts): each
 * reader's position, the definitions made over REST, and the values `new_value` rules have seen.
 */
import { eq } from "drizzle-orm";
import type { Db } from "./index";
import { ALONE, decodeDefinition, encodeDefinition, type OutputStorage, type StoredDefinition } from "./output-storage";
import { alertRules, outputs, readerPositions, ruleSeen } from "./schema";

export type { StoredDefinition };

export class OutputStore implements OutputStorage {
  /** One instance uses an SQLite file. */
  readonly leases = ALONE;

  constructor(private readonly db: Db) {}

  position(reader: string): number | null {
    return this.db.select({ p: readerPositions.position }).from(readerPositions).where(eq(readerPositions.reader, reader)).get()?.p ?? null;
  }

  setPosition(reader: string, position: number): void {
    const now = Date.now();
    this.db
      .insert(readerPositions)
      .values({ reader, position, updatedAt: now })
      .onConflictDoUpdate({ target: readerPositions.reader, set: { position, updatedAt: now } })
      .run();
  }

  /**
   * `setPosition` only if the write lock is free now; false (nothing written) when the event
   * writer holds it. This connection belongs to the thread that receives events: waiting for
   * the lock there stalled receiving for 35-260 ms per write under load (measured).
   */
  trySetPosition(reader: string, position: number): boolean {
    const client = this.db.$client;
    const wait = (client.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
    client.exec("PRAGMA busy_timeout = 0");
    try {
      this.setPosition(reader, position);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === "SQLITE_BUSY") return false;
      throw e;
    } finally {
      client.exec(`PRAGMA busy_timeout = ${wait}`);
    }
  }

  savePosition(reader: string, position: number, wait: boolean): boolean {
    if (!wait) return this.trySetPosition(reader, position);
    this.setPosition(reader, position);
    return true;
  }

  deletePosition(reader: string): void {
    this.db.delete(readerPositions).where(eq(readerPositions.reader, reader)).run();
  }

  outputs(): StoredDefinition[] {
    return this.db.select().from(outputs).all().map(decodeDefinition);
  }

  /** False when an output of that name exists already. */
  addOutput(name: string, type: string, definition: unknown): boolean {
    const r = this.db.insert(outputs).values({ name, type, definition: JSON.stringify(definition), createdAt: Date.now() }).onConflictDoNothing().run();
    return changes(r) === 1;
  }

  updateOutput(name: string, type: string, definition: unknown): boolean {
    return this.rewrite(outputs, name, (old) => ({ type, definition: encodeDefinition(definition, old.paused) }));
  }

  pauseOutput(name: string, paused: boolean): boolean {
    return this.rewrite(outputs, name, (old) => ({ definition: encodeDefinition(old.definition, paused) }));
  }

  /** Changes a stored definition's row as `change` says from what it holds; false when there is none. */
  private rewrite<T extends typeof outputs | typeof alertRules>(table: T, name: string, change: (old: StoredDefinition) => Partial<T["$inferInsert"]>, before?: (tx: Parameters<Parameters<Db["transaction"]>[0]>[0]) => void): boolean {
    return this.db.transaction((tx) => {
      const row = tx.select().from(table as typeof outputs).where(eq(table.name, name)).get();
      if (!row) return false;
      before?.(tx);
      tx.update(table as typeof outputs).set(change(decodeDefinition(row))).where(eq(table.name, name)).run();
      return true;
    });
  }

  deleteOutput(name: string): boolean {
    const r = this.db.transaction((tx) => {
      tx.delete(readerPositions).where(eq(readerPositions.reader, `output:${name}`)).run();
      return tx.delete(outputs).where(eq(outputs.name, name)).run();
    });
    return changes(r) === 1;
  }

  rules(): StoredDefinition[] {
    return this.db.select().from(alertRules).all().map(decodeDefinition);
  }

  addRule(name: string, definition: unknown): boolean {
    const r = this.db.insert(alertRules).values({ name, definition: JSON.stringify(definition), createdAt: Date.now() }).onConflictDoNothing().run();
    return changes(r) === 1;
  }

  updateRule(name: string, definition: unknown, forgetSeen: boolean): boolean {
    const forget = (tx: Parameters<Parameters<Db["transaction"]>[0]>[0]) => (forgetSeen ? tx.delete(ruleSeen).where(eq(ruleSeen.rule, name)).run() : undefined);
    return this.rewrite(alertRules, name, (old) => ({ definition: encodeDefinition(definition, old.paused) }), forget);
  }

  pauseRule(name: string, paused: boolean): boolean {
    return this.rewrite(alertRules, name, (old) => ({ definition: encodeDefinition(old.definition, paused) }));
  }

  deleteRule(name: string): boolean {
    const r = this.db.transaction((tx) => {
      tx.delete(ruleSeen).where(eq(ruleSeen.rule, name)).run();
      return tx.delete(alertRules).where(eq(alertRules.name, name)).run();
    });
    return changes(r) === 1;
  }

  seenValues(rule: string): string[] {
    return this.db.select({ v: ruleSeen.value }).from(ruleSeen).where(eq(ruleSeen.rule, rule)).all().map((r) => r.v);
  }

  addSeen(rule: string, values: string[]): void {
    if (values.length === 0) return;
    this.db.transaction((tx) => {
      for (const value of values) tx.insert(ruleSeen).values({ rule, value }).onConflictDoNothing().run();
    });
  }
}

const changes = (result: unknown): number => (result as { changes?: number } | undefined)?.changes ?? 0;
