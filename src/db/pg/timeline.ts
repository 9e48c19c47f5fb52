/**
 * Events per time step on PostgreSQL (../timeline.ts): the same plan, segments wholly in one
 * step by their summaries, the others read within the range's time (which prunes the day
 * partitions).
 */
import type { SQL } from "bun";
import { SEG_SIZE } from "../event-store";
import { SegmentTallies, stepOf } from "../stats-range";
import { keptSteps, summedSteps, timelineOf, type Timeline, type TimelineAsk, type TimelineStorage } from "../timeline";
import { pgKeepTallies, pgSegmentSources, pgSegmentsIn, pgSourceIds } from "./event-queries";

export class PgTimeline implements TimelineStorage {
  /** Filtered timelines' counts by source of whole segments (../stats-range.ts SegmentTallies). */
  private readonly tallies = new SegmentTallies();
  constructor(private readonly sql: SQL) {}

  async timeline(ask: TimelineAsk): Promise<Timeline> {
    const sql = this.sql;
    const { start, end, step } = ask;
    const sources = await pgSourceIds(sql, ask.filter ?? {});
    if (sources !== null && sources.length === 0) return timelineOf(ask, []);
    const segs = await pgSegmentsIn(sql, { from: start, to: end });
    let counted: { b: number; n: number }[];
    let scan: [number, number][];
    if (sources === null) ({ counted, scan } = summedSteps(segs, ask));
    else {
      const match = new Set(sources);
      const plan = this.tallies.plan(segs, { from: start, to: end }, match, await pgSegmentSources(sql, segs), (s) => stepOf(s, ask) !== null);
      await pgKeepTallies(sql, this.tallies, plan.missing, segs);
      counted = keptSteps(plan.whole, ask, this.tallies, match);
      scan = plan.edges;
    }
    // Events of a batch being written have no segment row yet: their ids follow the last one.
    const [t] = await sql`select max(seg)::float8 as top from event_segments`;
    scan.push([t.top === null ? 0 : (t.top + 1) * SEG_SIZE, Number.MAX_SAFE_INTEGER]);
    const bySource = sources === null ? sql`` : sql`and source_id = any(${sql.array(sources, "INT")})`;
    for (const [lo, hi] of scan) {
      const rows: { b: number; n: number }[] = await sql`
        select ((ts - ${start}) / ${step})::int4 as b, count(*)::int4 as n from events
        where id between ${lo} and ${hi} and ts >= ${start} and ts < ${end} ${bySource} group by 1`;
      for (const r of rows) counted.push(r);
    }
    return timelineOf(ask, counted);
  }
}
