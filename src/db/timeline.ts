/**
 * Events per time step over a range, of a node, pot or kind if asked, for the console's charts. The events table has
 * no time index (see schema.ts), so the scan starts at the first segment whose newest event is
 * in the window: the rows after it are read once, by id, and counted by step.
 */
import type { Db } from "./index";
import { SEG_SIZE } from "./event-store";
import { sourceIdsOf } from "./event-queries";
import type { SourceFilter } from "./stats-range";
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

/** Counts by step number (`b`, from the first step) as a timeline. */
export function timelineOf(ask: TimelineAsk, rows: { b: number; n: number }[]): Timeline {
  const steps = Math.round((ask.end - ask.start) / ask.step);
  const counts = new Array<number>(steps).fill(0);
  for (const r of rows) if (r.b >= 0 && r.b < steps) counts[r.b] = r.n;
  return { start: ask.start, step: ask.step, counts };
}

/**
 * The id range to scan for events of [start, end): from the first segment whose newest event
 * is at or after start, to the last one whose oldest is before end; events of the batch in
 * progress have no segment row yet, so a range that reaches the newest segment has no upper
 * bound. Null: no event can be in it.
 */
export function scanIds(s: { first: number | null; last: number | null; top: number | null }): { lo: number; hi: number } | null {
  const lo = s.first ?? (s.top === null ? 0 : (s.top + 1) * SEG_SIZE);
  const hi = s.last === null || s.last === s.top ? Number.MAX_SAFE_INTEGER : (s.last + 1) * SEG_SIZE - 1;
  return lo > hi ? null : { lo, hi };
}

export class SqlTimeline implements TimelineStorage {
  constructor(private readonly db: Db) {}
  timeline(ask: TimelineAsk): Timeline {
    return eventTimeline(this.db, ask);
  }
}

export function eventTimeline(db: Db, ask: TimelineAsk): Timeline {
  const { start, end, step } = ask;
  const client = db.$client;
  const sources = sourceIdsOf(db, ask.filter ?? {});
  if (sources !== null && sources.length === 0) return timelineOf(ask, []);
  const s = client
    .query<{ first: number | null; last: number | null; top: number | null }, [number, number]>(
      "SELECT (SELECT min(seg) FROM event_segments WHERE max_ts >= ?1) AS first, (SELECT max(seg) FROM event_segments WHERE min_ts < ?2) AS last, (SELECT max(seg) FROM event_segments) AS top",
    )
    .get(start, end)!;
  const ids = scanIds(s);
  if (ids === null) return timelineOf(ask, []);
  // Source ids are the dictionary's integers, written into the statement.
  const bySource = sources === null ? "" : ` AND source_id IN (${sources.map((id) => Math.trunc(id)).join(",")})`;
  const rows = client
    .query<{ b: number; n: number }, [number, number, number, number, number]>(`SELECT (ts - ?1) / ?2 AS b, count(*) AS n FROM events WHERE id >= ?3 AND id <= ?5 AND ts >= ?1 AND ts < ?4${bySource} GROUP BY b`)
    .all(start, step, ids.lo, end, ids.hi);
  return timelineOf(ask, rows);
}
