/**
 * Events per time step over a range, of a node, pot or kind if asked, for the console's charts. The events table has
 * no time index (see schema.ts): the segments that reach into the range are found by their
 * summaries; one wholly in one step adds its stored count, the others are read by id and their
 * events counted by step.
 */
import type { Db } from "./index";
import { SEG_SIZE } from "./event-store";
import { keepTallies, segmentSources, segmentsIn, sourceIdsOf, sqlInts } from "./event-queries";
import { idRuns, SegmentTallies, stepOf, type SegmentSpan, type SourceFilter } from "./stats-range";
import type { MaybePromise } from "./stores";

export interface Timeline {
  /** Start of the first step, ms since the epoch (a multiple of the step). */
  start: number;
  step: number;
  counts: number[];
}

/** Which steps, of whose events: the steps from `start` to `end` (multiples of `step`), of the filter's sources. */
export interface TimelineAsk {
  start: number;
  end: number;
  step: number;
  filter?: SourceFilter;
}

/** What `GET /api/v1/stats/timeline` reads: SQLite here, PostgreSQL in pg/timeline.ts. */
export interface TimelineStorage {
  timeline(ask: TimelineAsk): MaybePromise<Timeline>;
}

/** The steps of a window ending with the step in progress at `now`. */
export function timelineSteps(windowMs: number, stepMs: number, now: number): TimelineAsk {
  const steps = Math.ceil(windowMs / stepMs);
  const end = (Math.floor(now / stepMs) + 1) * stepMs;
  return { start: end - steps * stepMs, end, step: stepMs };
}

/** The steps that cover a range [from, to). */
export function rangeSteps(from: number, to: number, stepMs: number): TimelineAsk {
  const start = Math.floor(from / stepMs) * stepMs;
  return { start, end: Math.max(start + stepMs, Math.ceil(to / stepMs) * stepMs), step: stepMs };
}

/** Counts by step number (`b`, from the first step; a step may come several times: summed) as a timeline. */
export function timelineOf(ask: TimelineAsk, rows: { b: number; n: number }[]): Timeline {
  const steps = Math.round((ask.end - ask.start) / ask.step);
  const counts = new Array<number>(steps).fill(0);
  for (const r of rows) if (r.b >= 0 && r.b < steps) counts[r.b]! += r.n;
  return { start: ask.start, step: ask.step, counts };
}

/** Without a filter: each segment wholly in one step by its stored count; the others' id ranges, to read. */
export function summedSteps(segs: readonly SegmentSpan[], ask: TimelineAsk): { counted: { b: number; n: number }[]; scan: [number, number][] } {
  const counted: { b: number; n: number }[] = [];
  const edges: number[] = [];
  for (const s of segs) {
    const b = stepOf(s, ask);
    if (b === null) edges.push(s.seg);
    else counted.push({ b, n: s.count });
  }
  return { counted, scan: idRuns(edges) };
}

/** With a filter: each segment wholly in one step by its kept count of the matching sources. */
export function keptSteps(whole: readonly SegmentSpan[], ask: TimelineAsk, tallies: SegmentTallies, match: Set<number>): { b: number; n: number }[] {
  return whole.map((s) => ({ b: stepOf(s, ask)!, n: tallies.matching(s.seg, match) }));
}

export class SqlTimeline implements TimelineStorage {
  /** Filtered timelines' counts by source of whole segments (stats-range.ts SegmentTallies). */
  private readonly tallies = new SegmentTallies();
  constructor(private readonly db: Db) {}
  timeline(ask: TimelineAsk): Timeline {
    return this.db.$client.transaction(() => eventTimeline(this.db, ask, this.tallies))();
  }
}

/**
 * A segment whose events all fall in one step adds its stored count (under a filter, its
 * kept count of the matching sources) to that step; the other segments are read and their
 * events counted by step.
 */
export function eventTimeline(db: Db, ask: TimelineAsk, tallies: SegmentTallies): Timeline {
  const { start, end, step } = ask;
  const client = db.$client;
  const sources = sourceIdsOf(db, ask.filter ?? {});
  if (sources !== null && sources.length === 0) return timelineOf(ask, []);
  const segs = segmentsIn(db, { from: start, to: end });
  let counted: { b: number; n: number }[];
  let scan: [number, number][];
  if (sources === null) ({ counted, scan } = summedSteps(segs, ask));
  else {
    const match = new Set(sources);
    const plan = tallies.plan(segs, { from: start, to: end }, match, segmentSources(db, segs), (s) => stepOf(s, ask) !== null);
    keepTallies(db, tallies, plan.missing, segs);
    counted = keptSteps(plan.whole, ask, tallies, match);
    scan = plan.edges;
  }
  // Events past the newest segment row (none once their batch has committed its summaries).
  const top = client.query<{ top: number | null }, []>("SELECT max(seg) AS top FROM event_segments").get()?.top;
  scan.push([top === null || top === undefined ? 0 : (top + 1) * SEG_SIZE, Number.MAX_SAFE_INTEGER]);
  const bySource = sources === null ? "" : ` AND source_id IN (${sqlInts(sources)})`;
  const q = client.query<{ b: number; n: number }, [number, number, number, number, number]>(`SELECT (ts - ?1) / ?2 AS b, count(*) AS n FROM events WHERE id BETWEEN ?3 AND ?4 AND ts >= ?1 AND ts < ?5${bySource} GROUP BY b`);
  for (const [lo, hi] of scan) for (const r of q.all(start, step, lo, hi, end)) counted.push(r);
  return timelineOf(ask, counted);
}
