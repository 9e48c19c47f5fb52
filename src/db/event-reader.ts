/**
 * Committed events in id order, for the readers with their own position (outputs and alert
 * rules, docs/outputs.md). Reads the events table alone, by rowid range, and resolves the
 * node/pot/type dictionary ids from copies kept here (they only grow); `data` is parsed only
 * when a reader looks at it, so an output that takes few events (alerts only) skips the others
 * for the price of reading their rows.
 */
import { asc, gt, sql } from "drizzle-orm";
import { parseWithIds } from "../protocol/json";
import type { Db } from "./index";
import type { CommittedEvents } from "./output-storage";
import { events, eventSources, eventTypes } from "./schema";

interface Source {
  node_id: bigint | null;
  pot_id: string | null;
  pot_type: string | null;
}

/** A stored event; `data` is parsed on first use. */
export class StoredEvent {
  private parsed: Record<string, unknown> | undefined;

  constructor(
    readonly id: number,
    readonly ts: number,
    readonly node_id: bigint | null,
    readonly pot_id: string | null,
    readonly pot_type: string | null,
    readonly event_type: string,
    readonly src_ip: string | null,
    private readonly text: string,
  ) {}

  get data(): Record<string, unknown> {
    // Exact u64 node ids nested in data need the exact parser; everything else the fast one.
    this.parsed ??= this.text.includes('"node_id"') ? (parseWithIds(this.text) as Record<string, unknown>) : JSON.parse(this.text);
    return this.parsed!;
  }
}

export class EventReader implements CommittedEvents {
  private readonly sources = new Map<number, Source>();
  private readonly types = new Map<number, string>();
  private readonly page;
  private readonly last;

  constructor(private readonly db: Db) {
    const ph = sql.placeholder;
    this.page = db
      .select({ id: events.id, ts: events.ts, sourceId: events.sourceId, typeId: events.typeId, srcIp: events.srcIp, data: events.data })
      .from(events)
      .where(gt(events.id, ph("position")))
      .orderBy(asc(events.id))
      .limit(ph("limit"))
      .prepare();
    this.last = db.select({ max: sql<number | null>`max(${events.id})` }).from(events).prepare();
  }

  /** Up to `limit` events with ids above `position`, oldest first. */
  after(position: number, limit: number): StoredEvent[] {
    const rows = this.page.values({ position, limit }) as unknown as [number, number, number, number, string | null, string][];
    const out: StoredEvent[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [id, ts, sourceId, typeId, srcIp, data] = rows[i]!;
      if (!this.sources.has(sourceId) || !this.types.has(typeId)) this.loadDictionaries();
      const s = this.sources.get(sourceId);
      out[i] = new StoredEvent(id, ts, s?.node_id ?? null, s?.pot_id ?? null, s?.pot_type ?? null, this.types.get(typeId) ?? "unknown", srcIp, data);
    }
    return out;
  }

  /** The id of the newest committed event, 0 when there is none. */
  lastId(): number {
    return this.last.get()?.max ?? 0;
  }

  private loadDictionaries(): void {
    for (const r of this.db.select().from(eventSources).all()) {
      this.sources.set(r.id, { node_id: r.nodeId === null ? null : BigInt(r.nodeId), pot_id: r.potId, pot_type: r.potType });
    }
    for (const r of this.db.select().from(eventTypes).all()) this.types.set(r.id, r.name);
  }
}
