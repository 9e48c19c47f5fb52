/**
 * Reading attack sessions on PostgreSQL (see ../session-queries.ts, the same plan): the rows
 * are upserted by session-part.ts in the writers' transactions. A session's events are read
 * segment by segment within its first and last event ids and its time range (which prunes
 * the day partitions of `events`).
 */
import type { SQL } from "bun";
import { toRow, type EventRow } from "../event-queries";
import { SEG_SIZE } from "../event-store";
import { MAX_SCAN, MAX_SESSION_EVENTS, type SessionFilter, type SessionPage, type SessionRow, type SessionStorage } from "../session-queries";
import { sessionOf } from "../session-fields";

interface Raw {
  id: number;
  session: string;
  source_id: number;
  node_id: string | null;
  pot_id: string | null;
  pot_type: string | null;
  src_ip: string | null;
  start_ts: number;
  end_ts: number;
  events: number;
  first_event_id: number;
  last_event_id: number;
  login_success: number;
  username: string | null;
  password: string | null;
  commands: number;
  files: number;
  ttylog: number;
  closed: number;
  segs: string;
}

function toSession(r: Raw): SessionRow {
  return {
    ...r,
    node_id: r.node_id === null ? null : BigInt(r.node_id),
    login_success: r.login_success === 1,
    ttylog: r.ttylog === 1,
    closed: r.closed === 1,
    segs: r.segs === "" ? [] : r.segs.split(",").map(Number),
  };
}

export class PgSessionQueries implements SessionStorage {
  constructor(private readonly sql: SQL) {}

  /** `where` is built of fragments, so every value stays a parameter. */
  private select(where: unknown, tail: unknown): Promise<SessionRow[]> {
    const sql = this.sql;
    return (
      sql`select x.id::float8 as id, x.session, x.source_id, s.node_id, s.pot_id, s.pot_type, x.src_ip, x.start_ts::float8 as start_ts, x.end_ts::float8 as end_ts,
          x.events, x.first_event_id::float8 as first_event_id, x.last_event_id::float8 as last_event_id, x.login_success, x.username, x.password,
          x.commands, x.files, x.ttylog, x.closed, x.segs
        from sessions x left join event_sources s on s.id = x.source_id
        where ${where} ${tail}` as Promise<Raw[]>
    ).then((rows) => rows.map(toSession));
  }

  async list(f: SessionFilter, limit: number, cursor: number | null): Promise<SessionPage> {
    const sql = this.sql;
    const upper = cursor === null ? Number.MAX_SAFE_INTEGER : cursor - 1;
    if (upper < 1) return { sessions: [], nextCursor: null };
    const conds: unknown[] = [sql`x.id <= ${upper}`];
    const sourceConds: unknown[] = [];
    if (f.nodeId !== undefined) sourceConds.push(sql`node_id = ${f.nodeId.toString()}`);
    if (f.potId !== undefined) sourceConds.push(sql`pot_id = ${f.potId}`);
    if (f.potType !== undefined) sourceConds.push(sql`pot_type = ${f.potType}`);
    const and = (parts: unknown[]) => parts.reduce((a, p) => sql`${a} and ${p}`);
    if (sourceConds.length > 0) {
      const ids = (await sql`select id from event_sources where ${and(sourceConds)}`).map((r: { id: number }) => r.id);
      if (ids.length === 0) return { sessions: [], nextCursor: null };
      conds.push(sql`x.source_id = any(${sql.array(ids, "INT")})`);
    }
    if (f.srcIp !== undefined) conds.push(sql`x.src_ip = ${f.srcIp}`);
    if (f.session !== undefined) conds.push(sql`x.session = ${f.session}`);
    if (f.since !== undefined) conds.push(sql`x.end_ts >= ${f.since}`);
    if (f.until !== undefined) conds.push(sql`x.start_ts < ${f.until}`);
    // Written as the partial indexes' conditions, so PostgreSQL can use them.
    const indexed = f.loginSuccess === true || f.hasCommands === true || f.hasFiles === true;
    if (f.loginSuccess !== undefined) conds.push(f.loginSuccess ? sql`x.login_success = 1` : sql`x.login_success = 0`);
    if (f.hasCommands !== undefined) conds.push(f.hasCommands ? sql`x.commands > 0` : sql`x.commands = 0`);
    if (f.hasFiles !== undefined) conds.push(f.hasFiles ? sql`x.files > 0` : sql`x.files = 0`);
    // A filter without an index scans a bounded window of rows per page.
    let windowLower: number | null = null;
    if (!indexed && conds.length > 1) {
      const [top] = await sql`select coalesce(max(id), 0)::float8 as m from sessions`;
      windowLower = Math.max(1, Math.min(upper, top.m) - MAX_SCAN + 1);
      conds.push(sql`x.id >= ${windowLower}`);
    }
    const rows = await this.select(and(conds), sql`order by x.id desc limit ${limit}`);
    if (rows.length === limit) return { sessions: rows, nextCursor: rows[rows.length - 1]!.id };
    return { sessions: rows, nextCursor: windowLower !== null && windowLower > 1 ? windowLower : null };
  }

  async get(id: number): Promise<SessionRow | null> {
    const [r] = await this.select(this.sql`x.id = ${id}`, this.sql``);
    return r ?? null;
  }

  async events(s: SessionRow): Promise<EventRow[]> {
    const sql = this.sql;
    const out: EventRow[] = [];
    for (const seg of s.segs) {
      const lo = Math.max(seg * SEG_SIZE, s.first_event_id);
      const hi = Math.min(seg * SEG_SIZE + SEG_SIZE - 1, s.last_event_id);
      const rows: { id: number; ts: number; node_id: string | null; pot_id: string | null; pot_type: string | null; event_type: string; src_ip: string | null; data: string }[] = await sql`
        select e.id::float8 as id, e.ts::float8 as ts, s.node_id, s.pot_id, s.pot_type, t.name as event_type, e.src_ip, e.data
        from events e left join event_sources s on s.id = e.source_id join event_types t on t.id = e.type_id
        where e.id between ${lo} and ${hi} and e.ts between ${s.start_ts} and ${s.end_ts} and e.source_id = ${s.source_id}
          and strpos(e.data, ${`"${s.session}"`}) > 0
        order by e.id limit ${MAX_SESSION_EVENTS - out.length}`;
      for (const r of rows) {
        // The same test as the writers': the first `session` key of the data names the session.
        if (sessionOf(r.data) === s.session) {
          out.push(toRow({ id: r.id, ts: r.ts, nodeId: r.node_id, potId: r.pot_id, potType: r.pot_type, eventType: r.event_type, srcIp: r.src_ip, data: r.data }));
        }
      }
      if (out.length >= MAX_SESSION_EVENTS) break;
    }
    return out;
  }
}
