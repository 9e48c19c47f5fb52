/**
 * Sessions on PostgreSQL: what a batch adds to them (../session-delta.ts, the step the SQLite
 * writer runs too), upserted into `sessions` on (source_id, session) as a part of both
 * PostgreSQL writers (event-writer.ts PgBatchPart). Several writers of a cluster may add to
 * one session: the upsert combines what each adds (earliest start, latest end, sums, the first
 * successful login's credentials, segments appended without repeating the last one), and
 * their batches commit one at a time in id order (event-writer-cluster.ts), so a session's
 * segments stay in order.
 */
import type { SQL } from "bun";
import { ints, texts } from "./arrays";
import { SessionBatcher, type SessionEntry } from "../session-delta";
import { type Kind, kindOfType } from "../session-fields";
import type { PgBatchPart, Rows } from "./event-writer";

export interface SessionsDelta {
  rows: Rows;
  firstId: number;
  /** Null when the batch has event types this part has not seen committed: read in the transaction. */
  sessions: SessionEntry[] | null;
  /** The kinds by type id including the batch's new types, once read; kept when it commits. */
  kinds: Kind[] | null;
}

export class PgSessionPart implements PgBatchPart<SessionsDelta> {
  /** What each event type adds to a session, by the database's type id (committed types only). */
  private kinds: Kind[] = [];
  private readonly batcher = new SessionBatcher();

  prepare(rows: Rows, firstId: number): SessionsDelta {
    for (let i = 0; i < rows.n; i++) if (this.kinds[rows.typeId[i]!] === undefined) return { rows, firstId, sessions: null, kinds: null };
    return { rows, firstId, sessions: this.read(rows, firstId, this.kinds), kinds: null };
  }

  async write(tx: SQL, d: SessionsDelta): Promise<void> {
    if (d.sessions === null) {
      // The batch's new types were inserted earlier in this transaction (a cluster's writer numbers them there).
      const kinds = this.kinds.slice();
      for (const t of (await tx`select id, name from event_types`) as { id: number; name: string }[]) kinds[t.id] = kindOfType(t.name);
      d.kinds = kinds;
      d.sessions = this.read(d.rows, d.firstId, kinds);
    }
    const s = d.sessions;
    if (s.length === 0) return;
    const col = <T>(f: (e: SessionEntry) => T) => s.map(f);
    await tx`insert into sessions (source_id, session, src_ip, start_ts, end_ts, first_event_id, last_event_id, events, login_success, username, password, commands, files, ttylog, closed, segs)
      select * from unnest(${ints(col((e) => e.sourceId))}::int4[], ${texts(col((e) => e.session))}::text[], ${texts(col((e) => e.srcIp))}::text[],
        ${ints(col((e) => e.startTs))}::int8[], ${ints(col((e) => e.endTs))}::int8[],
        ${ints(col((e) => e.firstEventId))}::int8[], ${ints(col((e) => e.lastEventId))}::int8[], ${ints(col((e) => e.events))}::int4[],
        ${ints(col((e) => (e.newLogin ? 1 : 0)))}::int4[], ${texts(col((e) => e.username))}::text[], ${texts(col((e) => e.password))}::text[],
        ${ints(col((e) => e.commands))}::int4[], ${ints(col((e) => e.files))}::int4[], ${ints(col((e) => e.ttylog))}::int4[],
        ${ints(col((e) => e.closed))}::int4[], ${texts(col((e) => e.segs))}::text[])
      on conflict (source_id, session) do update set
        src_ip = coalesce(sessions.src_ip, excluded.src_ip),
        start_ts = least(sessions.start_ts, excluded.start_ts),
        end_ts = greatest(sessions.end_ts, excluded.end_ts),
        first_event_id = least(sessions.first_event_id, excluded.first_event_id),
        last_event_id = greatest(sessions.last_event_id, excluded.last_event_id),
        events = sessions.events + excluded.events,
        username = case when sessions.login_success = 1 then sessions.username else excluded.username end,
        password = case when sessions.login_success = 1 then sessions.password else excluded.password end,
        login_success = greatest(sessions.login_success, excluded.login_success),
        commands = sessions.commands + excluded.commands,
        files = sessions.files + excluded.files,
        ttylog = greatest(sessions.ttylog, excluded.ttylog),
        closed = greatest(sessions.closed, excluded.closed),
        segs = case when split_part(sessions.segs, ',', -1) = split_part(excluded.segs, ',', 1)
          then sessions.segs || substr(excluded.segs, length(split_part(excluded.segs, ',', 1)) + 1)
          else sessions.segs || ',' || excluded.segs end`;
  }

  committed(d: SessionsDelta): void {
    if (d.kinds) this.kinds = d.kinds;
  }

  /** Sessions that ended before the cutoff, with their recordings (as the SQLite writer's retention). */
  async retentionStep(sql: SQL, cutoffMs: number, maxRows: number): Promise<number> {
    const [r] = await sql`
      with doomed as (select id from sessions where end_ts < ${cutoffMs} order by id limit ${maxRows}),
      gone as (delete from sessions where id in (select id from doomed) returning source_id, session),
      recordings as (
        delete from session_recordings r using gone g join event_sources s on s.id = g.source_id
        where r.node_id = s.node_id and r.pot_id = s.pot_id and r.session = g.session)
      select count(*)::int as n from gone`;
    return r.n;
  }

  /**
   * Every session of the batch as new (`known` cleared): another writer may have added to a
   * session since, so what this one stored last says nothing; the upsert combines instead.
   */
  private read(rows: Rows, firstId: number, kinds: Kind[]): SessionEntry[] {
    let bytes = rows.bytes;
    if (!bytes) {
      const ends = new Int32Array(rows.n);
      let end = 0;
      for (let i = 0; i < rows.n; i++) ends[i] = end += Buffer.byteLength(rows.data[i]!);
      bytes = { buf: Buffer.from(rows.data.join("")), ends };
    }
    this.batcher.known.clear();
    return this.batcher.read(rows.n, firstId, bytes.buf, bytes.ends, rows.ts, rows.sourceId, rows.typeId, rows.ips, kinds);
  }
}
