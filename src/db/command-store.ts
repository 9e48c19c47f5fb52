/**
 * SQL for command records: who sent what to which node, when, from where, and how it ended.
 */
import { and, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import { parseWithIds, stringify } from "../protocol/json";
import type { Db } from "./index";
import { commands } from "./schema";
import type { CommandStorage } from "./stores";
import type { CommandRecord, CommandStatus } from "../protocol/records";

/** A command's record as REST shows it: one schema, src/protocol/records.ts. */
export type { CommandRecord, CommandStatus } from "../protocol/records";

export interface CommandQuery {
  node_id?: bigint;
  pot_id?: string;
  command?: string;
  status?: string;
  /** Records older than this cursor (an opaque number from `next_cursor`). */
  cursor?: number;
  limit: number;
}

export class CommandStore implements CommandStorage {
  constructor(private readonly db: Db) {}

  insert(r: Omit<CommandRecord, "created_at" | "updated_at" | "data">, at: number): void {
    this.db
      .insert(commands)
      .values({
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
      })
      .run();
  }

  /** Moves a record on; a finished record (succeeded or failed) is never changed again. */
  update(commandId: string, status: CommandStatus, message: string | null, at: number, data?: unknown): boolean {
    const open = and(eq(commands.commandId, commandId), inArray(commands.status, ["issued", "sent"]));
    const set = { status, message, updatedAt: at, ...(data !== undefined ? { data: stringify(data) } : {}) };
    return this.db.update(commands).set(set).where(open).returning({ id: commands.id }).all().length > 0;
  }

  get(commandId: string): CommandRecord | null {
    const row = this.db.select().from(commands).where(eq(commands.commandId, commandId)).get();
    return row ? toRecord(row) : null;
  }

  find(commandId: string): CommandRecord | null {
    return this.get(commandId);
  }

  list(q: CommandQuery): { commands: CommandRecord[]; next_cursor: string | null } {
    const where: SQL[] = [];
    if (q.node_id !== undefined) where.push(eq(commands.nodeId, q.node_id.toString()));
    if (q.pot_id) where.push(eq(commands.potId, q.pot_id));
    if (q.command) where.push(eq(commands.name, q.command));
    if (q.status) where.push(eq(commands.status, q.status));
    if (q.cursor !== undefined) where.push(lt(commands.id, q.cursor));
    const rows = this.db
      .select()
      .from(commands)
      .where(where.length ? and(...where) : undefined)
      .orderBy(desc(commands.id))
      .limit(q.limit + 1)
      .all();
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
