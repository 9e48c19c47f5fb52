/**
 * Events per time step over a recent window, for the console's charts. The events table has
 * no time index (see schema.ts), so the scan starts at the first segment whose newest event is
 * in the window: the rows after it are read once, by id, and counted by step.
 */
import type { Db } from "./index";
import { SEG_SIZE } from "./event-store";
import type { MaybePromise } from "./stores";

export interface Timeline {
  /** Start of the first step, ms since the epoch (a multiple of the step). */
  start: number;
  step: number;
  counts: number[];
}

/** What `GET /api/v1/stats/timeline` reads: SQLite here, PostgreSQL in pg/timeline.ts. */
export interface TimelineStorage {
  timeline(windowMs: number, stepMs: number, now?: number): MaybePromise<Timeline>;
}

/** The steps of a window ending with the step in progress at `now`. */
export function timelineSteps(windowMs: number, stepMs: number, now: number): { steps: number; start: number; end: number } {
  const steps = Math.ceil(windowMs / stepMs);
  const end = (Math.floor(now / stepMs) + 1) * stepMs;
  return { steps, start: end - steps * stepMs, end };
}

/** Counts by step number (`b`, from the window's start) as a timeline. */
export function timelineOf(range: { steps: number; start: number }, stepMs: number, rows: { b: number; n: number }[]): Timeline {
  const counts = new Array<number>(range.steps).fill(0);
  for (const r of rows) if (r.b >= 0 && r.b < range.steps) counts[r.b] = r.n;
  return { start: range.start, step: stepMs, counts };
}

export class SqlTimeline implements TimelineStorage {
  constructor(private readonly db: Db) {}
  timeline(windowMs: number, stepMs: number, now = Date.now()): Timeline {
    return eventTimeline(this.db, windowMs, stepMs, now);
  }
}

export function eventTimeline(db: Db, windowMs: number, stepMs: number, now = Date.now()): Timeline {
  const range = timelineSteps(windowMs, stepMs, now);
  const { start, end } = range;
  const client = db.$client;
  const seg = client.query<{ seg: number | null }, [number]>("SELECT min(seg) AS seg FROM event_segments WHERE max_ts >= ?").get(start)?.seg;
  // Events of the batch in progress have no segment row yet: their ids follow the last one.
  const last = client.query<{ seg: number | null }, []>("SELECT max(seg) AS seg FROM event_segments").get()?.seg;
  const fromId = seg ?? (last === null || last === undefined ? 0 : (last + 1) * SEG_SIZE);
  const rows = client
    .query<{ b: number; n: number }, [number, number, number, number]>("SELECT (ts - ?1) / ?2 AS b, count(*) AS n FROM events WHERE id >= ?3 AND ts >= ?1 AND ts < ?4 GROUP BY b")
    .all(start, stepMs, fromId, end);
  return timelineOf(range, stepMs, rows);
}
