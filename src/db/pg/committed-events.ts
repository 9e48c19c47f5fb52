/**
 * Committed events in id order on PostgreSQL, for outputs and alert rules (../output-storage.ts):
 * the same rows as the SQLite reader gives (../event-reader.ts: node/pot/type resolved from
 * copies of the dictionaries kept here, `data` parsed only when a reader looks at it).
 */
import type { SQL } from "bun";
import { LAST_ID } from "../event-store";
import { StoredEvent } from "../event-reader";
import type { CommittedEvents } from "../output-storage";

interface Source {
  node_id: bigint | null;
  pot_id: string | null;
  pot_type: string | null;
}

export class PgCommittedEvents implements CommittedEvents {
  private readonly sources = new Map<number, Source>();
  private readonly types = new Map<number, string>();

  constructor(private readonly sql: SQL) {}

  async after(position: number, limit: number): Promise<StoredEvent[]> {
    const rows: { id: string; ts: string; source_id: number; type_id: number; src_ip: string | null; data: string }[] = await this.sql`
      select id, ts, source_id, type_id, src_ip, data from events where id > ${position} order by id limit ${limit}`;
    const out: StoredEvent[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (!this.sources.has(r.source_id) || !this.types.has(r.type_id)) await this.loadDictionaries();
      const s = this.sources.get(r.source_id);
      out[i] = new StoredEvent(Number(r.id), Number(r.ts), s?.node_id ?? null, s?.pot_id ?? null, s?.pot_type ?? null, this.types.get(r.type_id) ?? "unknown", r.src_ip, r.data);
    }
    return out;
  }

  /** Both writers (alone and a cluster's) keep the last id given in event_meta, in the transaction of its events. */
  async lastId(): Promise<number> {
    const [r] = await this.sql`select coalesce((select value from event_meta where key = ${LAST_ID}), (select max(id) from events), 0)::float8 as id`;
    return Number(r.id);
  }

  private async loadDictionaries(): Promise<void> {
    for (const r of await this.sql`select id, node_id, pot_id, pot_type from event_sources`) {
      this.sources.set(r.id, { node_id: r.node_id === null ? null : BigInt(r.node_id), pot_id: r.pot_id, pot_type: r.pot_type });
    }
    for (const r of await this.sql`select id, name from event_types`) this.types.set(r.id, r.name);
  }
}
