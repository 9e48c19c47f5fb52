/**
 * Events per time step on PostgreSQL (../timeline.ts): the same plan, the rows from the first
 * segment that reaches into the window on, within the window's time (which prunes the day
 * partitions).
 */
import type { SQL } from "bun";
import { SEG_SIZE } from "../event-store";
import { timelineOf, timelineSteps, type Timeline, type TimelineStorage } from "../timeline";

export class PgTimeline implements TimelineStorage {
  constructor(private readonly sql: SQL) {}

  async timeline(windowMs: number, stepMs: number, now = Date.now()): Promise<Timeline> {
    const sql = this.sql;
    const range = timelineSteps(windowMs, stepMs, now);
    const { start, end } = range;
    const [s] = await sql`select max(seg)::float8 as last, min(seg) filter (where max_ts >= ${start})::float8 as seg from event_segments`;
    // Events of a batch being written have no segment row yet: their ids follow the last one.
    const fromId = s.seg ?? (s.last === null ? 0 : (s.last + 1) * SEG_SIZE);
    const rows: { b: number; n: number }[] = await sql`
      select ((ts - ${start}) / ${stepMs})::int4 as b, count(*)::int4 as n from events
      where id >= ${fromId} and ts >= ${start} and ts < ${end} group by 1`;
    return timelineOf(range, stepMs, rows);
  }
}
