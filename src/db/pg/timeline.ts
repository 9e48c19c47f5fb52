/**
 * Events per time step on PostgreSQL (../timeline.ts): the same plan, the rows of the segments
 * that reach into the range, within its time (which prunes the day partitions).
 */
import type { SQL } from "bun";
import { scanIds, timelineOf, type Timeline, type TimelineAsk, type TimelineStorage } from "../timeline";
import { pgSourceIds } from "./event-queries";

export class PgTimeline implements TimelineStorage {
  constructor(private readonly sql: SQL) {}

  async timeline(ask: TimelineAsk): Promise<Timeline> {
    const sql = this.sql;
    const { start, end, step } = ask;
    const sources = await pgSourceIds(sql, ask.filter ?? {});
    if (sources !== null && sources.length === 0) return timelineOf(ask, []);
    const [s] = await sql`select max(seg)::float8 as top, min(seg) filter (where max_ts >= ${start})::float8 as first, max(seg) filter (where min_ts < ${end})::float8 as last from event_segments`;
    const ids = scanIds(s);
    if (ids === null) return timelineOf(ask, []);
    const bySource = sources === null ? sql`` : sql`and source_id = any(${sql.array(sources, "INT")})`;
    const rows: { b: number; n: number }[] = await sql`
      select ((ts - ${start}) / ${step})::int4 as b, count(*)::int4 as n from events
      where id >= ${ids.lo} and id <= ${ids.hi} and ts >= ${start} and ts < ${end} ${bySource} group by 1`;
    return timelineOf(ask, rows);
  }
}
