/**
 * The PostgreSQL event writer in cluster mode: several writer instances (cluster/writer-role.ts)
 * commit batches that ingest instances published on the bus (cluster/wire.ts), into one
 * database. What differs from the single writer (event-writer.ts):
 *
 * - ids: each transaction starts by locking the `last_event_id` row of event_meta, so the
 *   writers take turns and ids grow in commit order (readers page by id);
 * - dictionaries: a batch carries its sources and types by value; they are mapped to the
 *   database's ids by natural key, new ones numbered under the same lock;
 * - idempotency: the events' keys (their sender and position, core/ingest/sender-keys.ts) go
 *   into event_keys first; only events whose key was new are stored, so a batch delivered
 *   twice, or a node's spool sent again to another instance, is stored once;
 * - counters: upserted in the batch's own transaction (no in-memory counts across writers);
 * - the Bloom filter of the current segment is read again when another writer wrote since;
 * - retention: one writer at a time (an advisory lock), and old event_keys rows go too.
 */
import type { SQL } from "bun";
import { ints, texts } from "./arrays";
import { COUNTED_THROUGH, DAILY_THROUGH, DAY_HOURS, HOUR_MS, LAST_ID, SEG_SIZE, batchBytes, batchData, type CountKind, type KeyedBatch, type SourceEntry, type TypeEntry } from "../event-store";
import { hasshOf, isKexType } from "../hassh";
import { HourlyCounts } from "../hourly-counts";
import { countStored, meta, PgEventWriter, type PgBatchPart, type PgWriteMode, type Rows, type StoredForCount } from "./event-writer";
import { partitionDays } from "./partitions";

/** What one committed message stored. */
export interface ClusterCommit {
  /** The id of the first stored event; the others follow. */
  firstId: number;
  /** Indexes (in the message) of the events stored, in id order; the others were stored before. */
  stored: number[];
}

const RETENTION_LOCK = 0x68627274; // "hbrt"

const sourceKey = (s: Pick<SourceEntry, "nodeId" | "potId" | "potType">) => JSON.stringify([s.nodeId, s.potId, s.potType]);

export class PgClusterEventWriter extends PgEventWriter {
  /** Natural key → the database's id, for entries committed (a rolled-back transaction's are not). */
  private readonly sourceIds = new Map<string, number>();
  private readonly typeIds = new Map<string, number>();

  /** `sql` is the writer's own client with one connection (the retention lock is a session's). */
  static async openCluster(sql: SQL, mode: PgWriteMode = "copy", parts: PgBatchPart[] = []): Promise<PgClusterEventWriter> {
    const w = new PgClusterEventWriter(sql, mode, parts);
    await w.load();
    return w;
  }

  protected override async load(): Promise<void> {
    // The lock row must exist before any writer takes it.
    await this.sql`insert into event_meta (key, value) select ${LAST_ID}, coalesce(max(id), 0) from events on conflict (key) do nothing`;
    await super.load();
  }

  /** Takes the writers' lock row; returns the last id given and the last day summed up. */
  private async lock(tx: SQL): Promise<{ last: number; dailyThrough: number | null }> {
    const rows: { key: string; v: number }[] = await tx`select key, value::float8 as v from event_meta where key in (${LAST_ID}, ${DAILY_THROUGH}) order by key for update`;
    const last = rows.find((r) => r.key === LAST_ID)?.v;
    if (last === undefined) throw new Error("event_meta has no last_event_id row: the database was not opened by a writer");
    return { last: Number(last), dailyThrough: rows.find((r) => r.key === DAILY_THROUGH)?.v ?? null };
  }

  protected override async lockForFix(tx: SQL): Promise<void> {
    await this.lock(tx);
  }

  /** The events a crash of a single-instance writer left uncounted, under the lock (several writers may start together). */
  protected override async recount(): Promise<void> {
    await this.sql.begin(async (tx) => {
      const { last } = await this.lock(tx);
      const through = (await meta(tx, COUNTED_THROUGH)) ?? 0;
      if (through >= last) return;
      const rows: StoredForCount[] = await tx`
        select e.ts, t.name as type, e.src_ip as ip, e.data from events e join event_types t on t.id = e.type_id where e.id > ${through}`;
      const counts = new HourlyCounts();
      countStored(counts, rows);
      await this.upsertCounts(tx, counts, this.dailyThrough);
      await tx`insert into event_meta (key, value) values (${COUNTED_THROUGH}, ${last}) on conflict (key) do update set value = excluded.value`;
    });
  }

  /** Counts are written with each batch: nothing waits in memory. */
  override get countsPending(): boolean {
    return false;
  }

  override async flushCounts(): Promise<void> {}

  /** Commits one message's new events (see the file header); resolves once committed. */
  async writeShared(m: KeyedBatch): Promise<ClusterCommit> {
    const ips = m.srcIps.split("\n");
    const data = batchData(m);
    await this.ensurePartitions(m.ts, m.n);
    const d = await this.sql.begin(async (tx) => {
      const locked = await this.lock(tx);
      if (locked.last !== this.lastId) {
        // Another writer wrote since this one's last batch: its addresses are in the stored filter.
        const seg = Math.floor(locked.last / SEG_SIZE);
        const [stored] = await tx`select ip_bloom from event_segments where seg = ${seg}`;
        this.summaries.useBloom(seg, stored ? new Uint8Array(stored.ip_bloom) : null);
        this.lastId = locked.last;
      }
      const sources = await this.mapSources(tx, m.newSources);
      const types = await this.mapTypes(tx, m.newTypes);
      const keyList = ints(m.keys);
      // The keys stored now come back only when some were not (a row per key cost more than storing it).
      const [back]: { n: number; keys: string | null }[] = await tx`
        with added as (insert into event_keys (key, ts) select * from unnest(${keyList}::int8[], ${ints(m.ts)}::int8[]) on conflict do nothing returning key)
        select count(*)::int as n, case when count(*) < ${m.n} then array_agg(key)::text end as keys from added`;
      let stored: number[];
      // Every key new (the rule): every event is stored.
      if (back!.n === m.n) stored = Array.from({ length: m.n }, (_, i) => i);
      else {
        const keys = keyList.slice(1, -1).split(",");
        const fresh = new Set(back!.n === 0 ? [] : back!.keys!.slice(1, -1).split(","));
        stored = [];
        // An event twice in one message: its key came back once, the first is stored.
        for (let i = 0; i < m.n; i++) if (fresh.delete(keys[i]!)) stored.push(i);
      }
      const localSource = new Map(m.newSources.map((s) => [s.id, sources.get(sourceKey(s))!]));
      const typeName = new Map(m.newTypes.map((t) => [t.id, t.name]));
      // Every event stored (the rule): the message's own columns.
      const all = stored.length === m.n;
      const rows: Rows = {
        n: stored.length,
        ts: all ? m.ts : stored.map((i) => m.ts[i]!),
        sourceId: stored.map((i) => localSource.get(m.sourceId[i]!)!),
        typeId: stored.map((i) => types.get(typeName.get(m.typeId[i]!)!)!),
        ips: all ? ips : stored.map((i) => ips[i]!),
        data: all ? data : stored.map((i) => data[i]!),
        bytes: all ? { buf: batchBytes(m), ends: m.dataEnds } : undefined,
      };
      const firstId = locked.last + 1;
      const last = locked.last + rows.n;
      const prep = this.prepare(rows, firstId);
      if (rows.n > 0) await this.insertRows(tx, rows, firstId, prep);
      // Counters: the next finished day summed up first (one per batch), by whichever writer comes.
      let dailyThrough = locked.dailyThrough ?? this.dailyThrough;
      if (dailyThrough + 1 < Math.floor(Date.now() / HOUR_MS / DAY_HOURS)) await this.rollUpIn(tx, ++dailyThrough);
      await this.upsertCounts(tx, this.countRows(m, stored, rows, typeName), dailyThrough);
      const metaKeys = rows.n > 0 ? [LAST_ID, COUNTED_THROUGH] : [];
      const metaValues = rows.n > 0 ? [last, last] : [];
      if (metaKeys.length) {
        await tx`insert into event_meta (key, value) select * from unnest(${texts(metaKeys)}::text[], ${ints(metaValues)}::int8[])
          on conflict (key) do update set value = excluded.value`;
      }
      // Batches of one stream may commit out of order on different writers: positions only grow.
      if (m.spools.length) {
        await tx`insert into event_meta (key, value) select * from unnest(${texts(m.spools.map((s) => s[0]))}::text[], ${ints(m.spools.map((s) => s[1]))}::int8[])
          on conflict (key) do update set value = greatest(event_meta.value, excluded.value)`;
      }
      return { commit: { firstId, stored } as ClusterCommit, prep, dailyThrough, sources, types };
    });
    this.committed(d.prep, d.commit.firstId + d.commit.stored.length - 1);
    this.dailyThrough = d.dailyThrough;
    for (const [k, id] of d.sources) this.sourceIds.set(k, id);
    for (const [k, id] of d.types) this.typeIds.set(k, id);
    return d.commit;
  }

  /** Natural key → id of every source given, numbering new ones after the largest id (under the lock). */
  private async mapSources(tx: SQL, entries: SourceEntry[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const missing = new Map<string, SourceEntry>();
    for (const s of entries) {
      const k = sourceKey(s);
      const id = this.sourceIds.get(k);
      if (id !== undefined) out.set(k, id);
      else missing.set(k, s);
    }
    if (missing.size === 0) return out;
    const m = [...missing.values()];
    // "do update" (a no-op) rather than "do nothing": it returns the existing rows' ids too.
    const rows: { id: number; node_id: string | null; pot_id: string | null; pot_type: string | null }[] = await tx`
      insert into event_sources (id, node_id, pot_id, pot_type)
      select top.id + u.ord, u.node_id, u.pot_id, u.pot_type
      from unnest(${texts(m.map((s) => s.nodeId))}::text[], ${texts(m.map((s) => s.potId))}::text[], ${texts(m.map((s) => s.potType))}::text[])
             with ordinality as u(node_id, pot_id, pot_type, ord),
           (select coalesce(max(id), 0) as id from event_sources) top
      on conflict on constraint event_sources_natural do update set node_id = excluded.node_id
      returning id, node_id, pot_id, pot_type`;
    for (const r of rows) out.set(sourceKey({ nodeId: r.node_id, potId: r.pot_id, potType: r.pot_type }), r.id);
    return out;
  }

  private async mapTypes(tx: SQL, entries: TypeEntry[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const missing = new Set<string>();
    for (const t of entries) {
      const id = this.typeIds.get(t.name);
      if (id !== undefined) out.set(t.name, id);
      else missing.add(t.name);
    }
    if (missing.size === 0) return out;
    const rows: { id: number; name: string }[] = await tx`
      insert into event_types (id, name)
      select top.id + u.ord, u.name
      from unnest(${texts([...missing])}::text[]) with ordinality as u(name, ord), (select coalesce(max(id), 0) as id from event_types) top
      on conflict (name) do update set name = excluded.name
      returning id, name`;
    for (const r of rows) out.set(r.name, r.id);
    return out;
  }

  /**
   * The counters of the stored events. The ingest side's credential counts are used when they
   * cover exactly these events (the whole batch in one message, none stored before); otherwise
   * the credentials are read from the data.
   */
  private countRows(m: KeyedBatch, stored: number[], rows: Rows, typeName: Map<number, string>): HourlyCounts {
    const c = new HourlyCounts();
    const whole = m.credsComplete && stored.length === m.n;
    for (let k = 0; k < rows.n; k++) {
      const h = Math.floor(rows.ts[k]! / HOUR_MS);
      if (rows.ips[k]) c.add("src_ip", h, rows.ips[k]!);
      const type = typeName.get(m.typeId[stored[k]!]!)!;
      c.add("event_type", h, type);
      const text = rows.data[k]!;
      if (isKexType(type)) {
        const hassh = hasshOf(text);
        if (hassh !== null) c.add("hassh", h, hassh);
      }
      if (whole || !(text.includes('"username"') || text.includes('"password"'))) continue;
      let d: Record<string, unknown> = {};
      try {
        d = JSON.parse(text);
      } catch {}
      if (typeof d.username === "string") c.add("username", h, d.username);
      if (typeof d.password === "string") c.add("password", h, d.password);
    }
    if (whole && m.credCounts) for (const [kind, h, counts] of JSON.parse(m.credCounts) as [CountKind, number, [string, number][]][]) for (const [key, n] of counts) c.add(kind, h, key, n);
    return c;
  }

  /** One writer of the cluster at a time deletes (the others skip their turn); old idempotency keys go last. */
  override async retentionStep(cutoffMs: number, maxRows: number): Promise<number> {
    const [got] = await this.sql`select pg_try_advisory_lock(${RETENTION_LOCK}) as yes`;
    if (!got.yes) return 0;
    try {
      // Another writer may have dropped days since.
      this.days = await partitionDays(this.sql);
      const n = await super.retentionStep(cutoffMs, maxRows);
      if (n > 0) return n;
      const gone: unknown[] = await this.sql`
        with doomed as (select key from event_keys where ts < ${cutoffMs} limit ${maxRows})
        delete from event_keys where key in (select key from doomed) returning 1`;
      return gone.length;
    } finally {
      await this.sql`select pg_advisory_unlock(${RETENTION_LOCK})`;
    }
  }
}
