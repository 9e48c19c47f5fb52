/**
 * Events per time step over a recent window, for the console's charts. The events table has
 * no time index (see schema.ts), so the scan starts at the first segment whose newest event is
 * in the window: the rows after it are read once, by id, and counted by step.
 */
import type { Db } from "./index";
import { SEG_SIZE } from "./event-store";

export interface Timeline {
  /** Start of the first step, ms since the epoch (a multiple of the step). */
  start: number;
  step: number;
  counts: number[];
}

export function eventTimeline(db: Db, windowMs: number, stepMs: number, now = Date.now()): Timeline {
  const steps = Math.ceil(windowMs / stepMs);
  const end = (Math.floor(now / stepMs) + 1) * stepMs;
  const start = end - steps * stepMs;
  const client = db.$client;
  const seg = client.query<{ seg: number | null }, [number]>("SELECT min(seg) AS seg FROM event_segments WHERE max_ts >= ?").get(start)?.seg;
  // Events of the batch in progress have no segment row yet: their ids follow the last one.
  const last = client.query<{ seg: number | null }, []>("SELECT max(seg) AS seg FROM event_segments").get()?.seg;
  const fromId = seg ?? (last === null || last === undefined ? 0 : (last + 1) * SEG_SIZE);
  const rows = client
    .query<{ b: number; n: number }, [number, number, number, number]>("SELECT (ts - ?1) / ?2 AS b, count(*) AS n FROM events WHERE id >= ?3 AND ts >= ?1 AND ts < ?4 GROUP BY b")
    .all(start, stepMs, fromId, end);
  const counts = new Array<number>(steps).fill(0);
  for (const r of rows) if (r.b >= 0 && r.b < steps) counts[r.b] = r.n;
  return { start, step: stepMs, counts };
}
