/**
 * What outputs and alert rules keep on PostgreSQL (../output-storage.ts). Every call goes to
 * the database and is awaited: several instances share these rows, so none is kept in memory
 * here, and a REST change answers only once it is stored.
 *
 * Leases: a session advisory lock per reader, taken on a connection of its own and never on
 * the pool (a pooled connection would carry its locks to whatever query uses it next). When the
 * holder dies, or its connection is lost, the server lets the lock go and another instance's
 * next `take` gets it.
 */
import type { SQL } from "bun";
import { eq } from "drizzle-orm";
import { decodeDefinition, encodeDefinition, type OutputStorage, type ReaderLeases, type StoredDefinition } from "../output-storage";
import { pgClient, type PgDb } from "./index";
import { alertRules, outputs, readerPositions, ruleSeen } from "./schema";

type Tx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];

export class PgOutputStore implements OutputStorage {
  readonly leases: PgReaderLeases;

  constructor(
    private readonly db: PgDb,
    url: string,
  ) {
    this.leases = new PgReaderLeases(url);
  }

  async position(reader: string): Promise<number | null> {
    const [r] = await this.db.select({ p: readerPositions.position }).from(readerPositions).where(eq(readerPositions.reader, reader));
    return r?.p ?? null;
  }

  async savePosition(reader: string, position: number): Promise<boolean> {
    const now = Date.now();
    await this.db
      .insert(readerPositions)
      .values({ reader, position, updatedAt: now })
      .onConflictDoUpdate({ target: readerPositions.reader, set: { position, updatedAt: now } });
    return true;
  }

  async outputs(): Promise<StoredDefinition[]> {
    return (await this.db.select().from(outputs)).map(decodeDefinition);
  }

  async addOutput(name: string, type: string, definition: unknown): Promise<boolean> {
    const r = await this.db.insert(outputs).values({ name, type, definition: JSON.stringify(definition), createdAt: Date.now() }).onConflictDoNothing().returning({ name: outputs.name });
    return r.length === 1;
  }

  async updateOutput(name: string, type: string, definition: unknown): Promise<boolean> {
    return this.rewrite(outputs, name, (old) => ({ type, definition: encodeDefinition(definition, old.paused) }));
  }

  async pauseOutput(name: string, paused: boolean): Promise<boolean> {
    return this.rewrite(outputs, name, (old) => ({ definition: encodeDefinition(old.definition, paused) }));
  }

  /**
   * Changes a stored definition's row as `change` says from what it holds; false when there is
   * none. Row-locked (`for update`), so an edit and a pause on two instances do not undo each other.
   */
  private rewrite<T extends typeof outputs | typeof alertRules>(table: T, name: string, change: (old: StoredDefinition) => Partial<T["$inferInsert"]>, before?: (tx: Tx) => Promise<unknown>): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.select().from(table as typeof outputs).where(eq(table.name, name)).for("update");
      if (!row) return false;
      await before?.(tx);
      await tx.update(table as typeof outputs).set(change(decodeDefinition(row))).where(eq(table.name, name));
      return true;
    });
  }

  async deleteOutput(name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.delete(readerPositions).where(eq(readerPositions.reader, `output:${name}`));
      return (await tx.delete(outputs).where(eq(outputs.name, name)).returning({ name: outputs.name })).length === 1;
    });
  }

  async rules(): Promise<StoredDefinition[]> {
    return (await this.db.select().from(alertRules)).map(decodeDefinition);
  }

  async addRule(name: string, definition: unknown): Promise<boolean> {
    const r = await this.db.insert(alertRules).values({ name, definition: JSON.stringify(definition), createdAt: Date.now() }).onConflictDoNothing().returning({ name: alertRules.name });
    return r.length === 1;
  }

  async updateRule(name: string, definition: unknown, forgetSeen: boolean): Promise<boolean> {
    const forget = async (tx: Tx) => (forgetSeen ? tx.delete(ruleSeen).where(eq(ruleSeen.rule, name)) : undefined);
    return this.rewrite(alertRules, name, (old) => ({ definition: encodeDefinition(definition, old.paused) }), forget);
  }

  async pauseRule(name: string, paused: boolean): Promise<boolean> {
    return this.rewrite(alertRules, name, (old) => ({ definition: encodeDefinition(old.definition, paused) }));
  }

  async deleteRule(name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.delete(ruleSeen).where(eq(ruleSeen.rule, name));
      return (await tx.delete(alertRules).where(eq(alertRules.name, name)).returning({ name: alertRules.name })).length === 1;
    });
  }

  async seenValues(rule: string): Promise<string[]> {
    return (await this.db.select({ v: ruleSeen.value }).from(ruleSeen).where(eq(ruleSeen.rule, rule))).map((r) => r.v);
  }

  async addSeen(rule: string, values: string[]): Promise<void> {
    if (values.length === 0) return;
    await this.db
      .insert(ruleSeen)
      .values(values.map((value) => ({ rule, value })))
      .onConflictDoNothing();
  }

  async close(): Promise<void> {
    await this.leases.close();
  }
}

/** A reader's lock key: 63 bits of its name's hash (positive, so pg_locks' two halves give it back). */
const lockKey = (reader: string): string => (Bun.hash.wyhash(`honeybee reader ${reader}`) & 0x7fff_ffff_ffff_ffffn).toString();

export class PgReaderLeases implements ReaderLeases {
  private client: SQL | null = null;
  private closed = false;

  constructor(private readonly url: string) {}

  async take(reader: string): Promise<boolean> {
    if (this.closed) return false;
    const sql = (this.client ??= pgClient(this.url, 1));
    const key = lockKey(reader);
    // One statement, so "held by this session" and the try are asked of the same session: a
    // connection opened again after a loss holds nothing and tries afresh. Held already, it is
    // not taken twice (session locks stack, and one unlock would not let it go).
    const [r] = await sql`
      select case when exists (
        select 1 from pg_locks where locktype = 'advisory' and pid = pg_backend_pid() and granted and objsubid = 1
          and ((classid::int8 << 32) | objid::int8) = ${key}::int8
      ) then true else pg_try_advisory_lock(${key}::int8) end as held`;
    return r.held === true;
  }

  async release(reader: string): Promise<void> {
    if (!this.client || this.closed) return;
    await this.client`select pg_advisory_unlock(${lockKey(reader)}::int8)`.catch(() => {});
  }

  /** Closing the connection lets every lock go at once. */
  async close(): Promise<void> {
    this.closed = true;
    await this.client?.close().catch(() => {});
    this.client = null;
  }
}
