/**
 * Command records on PostgreSQL. The router's synchronous path (issue, a node's result) works
 * on the open records (issued or sent), held in memory and loaded at start; every change is
 * written through in order, and REST reads wait for those writes before they query.
 */
import { and, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import { parseWithIds, stringify } from "../../protocol/json";
import type { CommandQuery, CommandRecord, CommandStatus } from "../command-store";
import type { CommandStorage } from "../stores";
import type { PgDb } from "./index";
import { commands } from "./schema";
import type { WriteQueue } from "./write-queue";

const OPEN: CommandStatus[] = ["issued", "sent"];

export class PgCommandStore implements CommandStorage {
  private constructor(
    private readonly db: PgDb,
    private readonly writes: WriteQueue,
    private readonly open: Map<string, CommandRecord>,
  ) {}

  static async open(db: PgDb, writes: WriteQueue): Promise<PgCommandStore> {
    const rows = await db.select().from(commands).where(inArray(commands.status, OPEN));
    return new PgCommandStore(db, writes, new Map(rows.map((r) => [r.commandId, toRecord(r)])));
  }

  insert(r: Omit<CommandRecord, "created_at" | "updated_at" | "data">, at: number): void {
    const when = new Date(at).toISOString();
    this.open.set(r.command_id, { ...r, data: null, created_at: when, updated_at: when });
    const row = {
      commandId: r.command_id,
      nodeId: r.node_id.toString(),
      name: r.command,
      potId: r.pot_id,
      body: JSON.stringify(r.body),
      status: r.status,
      message: r.message,
      source: r.source,
      principal: r.principal,
      remoteAddr: r.remote_addr,
      createdAt: at,
      updatedAt: at,
    };
    // Idempotent: tried again after a connection lost mid-write, the first may have been stored.
    this.writes.push("command", () => this.db.insert(commands).values(row).onConflictDoNothing({ target: commands.commandId }));
  }

  update(commandId: string, status: CommandStatus, message: string | null, at: number, data?: unknown): boolean {
    const rec = this.open.get(commandId);
    if (!rec) return false;
    Object.assign(rec, { status, message, updated_at: new Date(at).toISOString() }, data !== undefined ? { data } : {});
    if (!OPEN.includes(status)) this.open.delete(commandId);
    const set = { status, message, updatedAt: at, ...(data !== undefined ? { data: stringify(data) } : {}) };
    this.writes.push("command", () => this.db.update(commands).set(set).where(and(eq(commands.commandId, commandId), inArray(commands.status, OPEN))));
    return true;
  }

  adopt(r: CommandRecord): void {
    if (OPEN.includes(r.status)) this.open.set(r.command_id, { ...r });
  }

  forget(commandId: string): void {
    this.open.delete(commandId);
  }

  settled(): Promise<void> {
    return this.writes.fresh();
  }

  get(commandId: string): CommandRecord | null {
    return this.open.get(commandId) ?? null;
  }

  async find(commandId: string): Promise<CommandRecord | null> {
    await this.writes.fresh();
    const [row] = await this.db.select().from(commands).where(eq(commands.commandId, commandId));
    return row ? toRecord(row) : null;
  }

  async list(q: CommandQuery): Promise<{ commands: CommandRecord[]; next_cursor: string | null }> {
    await this.writes.fresh();
    const where: SQL[] = [];
    if (q.node_id !== undefined) where.push(eq(commands.nodeId, q.node_id.toString()));
    if (q.pot_id) where.push(eq(commands.potId, q.pot_id));
    if (q.command) where.push(eq(commands.name, q.command));
    if (q.status) where.push(eq(commands.status, q.status));
    if (q.cursor !== undefined) where.push(lt(commands.id, q.cursor));
    const rows = await this.db
      .select()
      .from(commands)
      .where(where.length ? and(...where) : undefined)
      .orderBy(desc(commands.id))
      .limit(q.limit + 1);
    const more = rows.length > q.limit;
    const page = more ? rows.slice(0, q.limit) : rows;
    return { commands: page.map(toRecord), next_cursor: more ? String(page[page.length - 1]!.id) : null };
  }
}

function toRecord(r: typeof commands.$inferSelect): CommandRecord {
  return {
    command_id: r.commandId,
    node_id: BigInt(r.nodeId),
    command: r.name,
    pot_id: r.potId,
    body: JSON.parse(r.body),
    status: r.status as CommandStatus,
    message: r.message,
    data: r.data === null ? null : parseWithIds(r.data),
    source: r.source,
    principal: r.principal,
    remote_addr: r.remoteAddr,
    created_at: new Date(r.createdAt).toISOString(),
    updated_at: new Date(r.updatedAt).toISOString(),
  };
}
