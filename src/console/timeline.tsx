/**
 * Events over time for a page's range: loaded from GET /api/v1/stats/timeline (with the page's
 * filters: node, honeypot, kind) at the range's step (timerange.ts: at most a few hundred bars),
 * then, for a range back from now, kept current from the live feed: each PotEvent of the same
 * scope is counted in its step and the chart moves on as time does.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { get, qs } from "./api";
import { StepChart, useInterval } from "./components";
import { openFeed } from "./feed";
import { isLive, rangeParams, stepFor, type TimeRange } from "./timerange";

export interface Series {
  start: number;
  stepMs: number;
  counts: number[];
}

/** What a dashboard shows: every event, or one node's, one honeypot's, one kind's. */
export interface Scope {
  node_id?: string;
  pot_id?: string;
  pot_type?: string;
}

/** Moves a series so its last step is the one holding `t`, dropping the oldest steps. */
function advance(s: Series, t: number): void {
  const last = s.start + (s.counts.length - 1) * s.stepMs;
  const steps = Math.floor((t - last) / s.stepMs);
  if (steps <= 0) return;
  const n = Math.min(steps, s.counts.length);
  s.counts.splice(0, n);
  for (let i = 0; i < n; i++) s.counts.push(0);
  s.start += steps * s.stepMs;
}

function bump(s: Series, t: number): void {
  advance(s, t);
  const i = Math.floor((t - s.start) / s.stepMs);
  if (i >= 0 && i < s.counts.length) s.counts[i]!++;
}

async function loadSeries(range: TimeRange, scope: Scope, step: string): Promise<Series> {
  const tl = await get<{ start: string; step_seconds: number; counts: number[] }>("/api/v1/stats/timeline" + qs({ ...rangeParams(range), ...scope, step }));
  return { start: Date.parse(tl.start), stepMs: tl.step_seconds * 1000, counts: tl.counts };
}

const inScope = (scope: Scope, e: any) => (!scope.pot_id || e?.pot_id === scope.pot_id) && (!scope.pot_type || e?.pot_type === scope.pot_type);

/**
 * Timelines of one scope over several ranges (the overview keeps the last hour's beside the
 * picked range), live while their range runs up to now. `version` changes on every redraw.
 */
export function useTimelines(ranges: TimeRange[], scope: Scope = {}) {
  const series = useRef<(Series | null)[]>([]);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<Error | null>(null);
  const dirty = useRef(false);
  const key = JSON.stringify([ranges, scope]);
  useEffect(() => {
    let live = true;
    series.current = ranges.map(() => null);
    setError(null);
    Promise.all(ranges.map((r) => loadSeries(r, scope, stepFor(r).step))).then(
      (all) => {
        if (!live) return;
        // Events that arrived on the feed while the timelines loaded may be counted already; a
        // step's difference of a few events is not worth a second query.
        series.current = all;
        setVersion((v) => v + 1);
      },
      (e) => live && setError(e),
    );
    const close = ranges.some(isLive)
      ? openFeed({
          kinds: ["PotEvent"],
          node_id: scope.node_id,
          pot_id: scope.pot_id,
          onMessage: (_kind, e) => {
            if (!inScope(scope, e)) return;
            const t = Date.parse(e?.timestamp) || Date.now();
            ranges.forEach((r, i) => {
              const s = series.current[i];
              if (s && isLive(r)) bump(s, t);
            });
            dirty.current = true;
          },
        })
      : () => {};
    return () => {
      live = false;
      close();
    };
  }, [key]);
  // Redrawn at most once a second however fast events come, and moved on when none do.
  useInterval(() => {
    const now = Date.now();
    let any = false;
    ranges.forEach((r, i) => {
      const s = series.current[i];
      if (s && isLive(r)) (advance(s, now), (any = true));
    });
    if (dirty.current || any) {
      dirty.current = false;
      setVersion((v) => v + 1);
    }
  }, 1000);
  return { series: series.current, version, error };
}

const STEP_WORDS: Record<string, string> = { "1m": "minute", "1h": "hour", "24h": "day" };
/** "minute", "5 min", "2 h": what one bar of a range's chart counts. */
export function stepWords(r: TimeRange): string {
  const { step } = stepFor(r);
  return STEP_WORDS[step] ?? step.replace(/m$/, " min").replace(/h$/, " h");
}

/** A range's chart (its empty box while it loads, so nothing below jumps). */
export function RangeChart({ series, version, label }: { series: Series | null | undefined; version: number; label: string }) {
  return series ? <StepChart start={series.start} stepMs={series.stepMs} counts={series.counts} version={version} label={label} /> : <div class="chart" style={{ height: "160px" }} />;
}
