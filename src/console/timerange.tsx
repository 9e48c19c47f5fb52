/**
 * The time range every page with counts shares (docs/console.md): the last 15 minutes, hour,
 * day, week or 30 days, or a from/to of the operator's choosing. It lives in the page's URL
 * (`?range=24h`, or `?from=…&to=…` in ISO 8601), so a view over a range is a link and survives
 * a reload; the picker changes only those parameters and keeps the page's others.
 */
import { useState } from "preact/hooks";
import { navigate } from "./router";

/** A range back from now (`window`, e.g. `24h`) or a fixed one (`from`, `to`: ms since the epoch). */
export type TimeRange = { window: string } | { from: number; to: number };

export const PRESETS = ["15m", "1h", "24h", "7d", "30d"] as const;
const WINDOW = /^([1-9][0-9]{0,4})([mhd])$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Points a timeline chart may have: a bar a few pixels wide on a laptop's screen. */
const MAX_POINTS = 360;
/** Steps the timeline API takes (minutes or hours), smallest first. */
const STEPS = ["1m", "2m", "5m", "10m", "15m", "30m", "1h", "2h", "3h", "6h", "12h", "24h"];

/** The range in a page's query, or `fallback` (a window) when it names none or a malformed one. */
export function readRange(query: URLSearchParams, fallback: string): TimeRange {
  const from = Date.parse(query.get("from") ?? "");
  const to = query.get("to") ? Date.parse(query.get("to")!) : Date.now();
  if (Number.isFinite(from) && Number.isFinite(to) && from < to) return { from, to };
  const w = query.get("range");
  return { window: w && WINDOW.test(w) ? w : fallback };
}

export const isLive = (r: TimeRange): r is { window: string } => "window" in r;

export function rangeMs(r: TimeRange): number {
  if (!isLive(r)) return r.to - r.from;
  const m = WINDOW.exec(r.window)!;
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The range as the stats APIs take it. */
export const rangeParams = (r: TimeRange): Record<string, string> => (isLive(r) ? { window: r.window } : { from: iso(r.from), to: iso(r.to) });

/** The range as the events and sessions pages' filters (`since`, `until`) take it. */
export const sinceUntil = (r: TimeRange): Record<string, string> => (isLive(r) ? { since: r.window } : { since: iso(r.from), until: iso(r.to) });

/**
 * The range for links from a page's values to their events: the range the URL names, none when
 * the page shows its default (the link then keeps the events page's own default, newest first).
 */
export function linkRange(query: URLSearchParams, r: TimeRange): Record<string, string> {
  return query.get("range") || query.get("from") ? sinceUntil(r) : {};
}

/** The timeline's step for a range: the smallest that keeps the chart to MAX_POINTS bars. */
export function stepFor(r: TimeRange): { step: string; ms: number } {
  const span = rangeMs(r);
  for (const step of STEPS) {
    const ms = Number(step.slice(0, -1)) * UNIT_MS[step.at(-1)!]!;
    if (span / ms <= MAX_POINTS) return { step, ms };
  }
  return { step: "24h", ms: UNIT_MS.d! };
}

const WORDS: Record<string, string> = { "15m": "last 15 min", "1h": "last hour", "24h": "last 24 hours", "7d": "last 7 days", "30d": "last 30 days" };
const short = (ms: number) => iso(ms).replace("T", " ").replace(/:\d\d\.\d+Z$/, "Z");

/** The range in words, for titles: "last 24 hours", "2026-11-20 10:00Z to 2026-11-21 10:00Z". */
export function rangeLabel(r: TimeRange): string {
  if (!isLive(r)) return `${short(r.from)} to ${short(r.to)}`;
  const m = WORDS[r.window];
  if (m) return m;
  const [, n, unit] = WINDOW.exec(r.window)!;
  return `last ${n} ${unit === "m" ? "min" : unit === "h" ? "hours" : "days"}`;
}

/** Short form for card titles: "24 h", "7 d", "from … to …". */
export const rangeShort = (r: TimeRange) => (isLive(r) ? r.window.replace(/([mhd])$/, " $1").replace(/ m$/, " min") : `${short(r.from)} – ${short(r.to)}`);

/** The current URL with its range replaced (`range`, or `from`/`to`), its other parameters kept. */
export function rangeHref(r: TimeRange, fallback: string): string {
  const q = new URLSearchParams(location.search);
  for (const k of ["range", "from", "to"]) q.delete(k);
  if (isLive(r)) {
    if (r.window !== fallback) q.set("range", r.window);
  } else {
    q.set("from", iso(r.from));
    q.set("to", iso(r.to));
  }
  const s = q.toString();
  return location.pathname + (s ? "?" + s : "");
}

/** A link to another page with counts (a dashboard) that keeps the range this page shows. */
export function withRange(href: string): string {
  const here = new URLSearchParams(location.search);
  const q = new URLSearchParams();
  for (const k of ["range", "from", "to"]) {
    const v = here.get(k);
    if (v) q.set(k, v);
  }
  const s = q.toString();
  return s ? `${href}${href.includes("?") ? "&" : "?"}${s}` : href;
}

/** `datetime-local`'s value (the browser's time zone) for ms since the epoch, and back. */
function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}
const fromLocalInput = (v: string) => (v ? new Date(v).getTime() : NaN);

/** The presets as `since` for pages that filter by since/until (events, sessions): `pick` gets the window. */
export function SinceButtons({ since, until, pick }: { since?: string; until?: string; pick: (window: string) => void }) {
  return (
    <fieldset class="ranges" aria-label="Time range">
      {PRESETS.map((w) => (
        <button key={w} type="button" class="ghost" aria-pressed={since === w && !until} onClick={() => pick(w)}>
          last {w}
        </button>
      ))}
    </fieldset>
  );
}

/** The picker: one button per preset and a from/to form; each choice navigates to the new URL. */
export function TimeRangePicker({ range, fallback }: { range: TimeRange; fallback: string }) {
  const [open, setOpen] = useState(!isLive(range));
  const [from, setFrom] = useState(() => toLocalInput(isLive(range) ? Date.now() - rangeMs(range) : range.from));
  const [to, setTo] = useState(() => toLocalInput(isLive(range) ? Date.now() : range.to));
  const bad = !(fromLocalInput(from) < fromLocalInput(to));
  return (
    <div class="timerange" data-testid="timerange">
      <fieldset class="ranges" aria-label="Time range">
        {PRESETS.map((w) => (
          <button key={w} type="button" class="ghost" aria-pressed={isLive(range) && range.window === w} onClick={() => navigate(rangeHref({ window: w }, fallback))}>
            {WORDS[w]}
          </button>
        ))}
        <button type="button" class="ghost" aria-pressed={!isLive(range)} aria-expanded={open} onClick={() => setOpen(!open)}>
          from / to…
        </button>
      </fieldset>
      {open && (
        <form
          class="filters range-form"
          aria-label="From and to"
          onSubmit={(e) => {
            e.preventDefault();
            if (!bad) navigate(rangeHref({ from: fromLocalInput(from), to: fromLocalInput(to) }, fallback));
          }}
        >
          <label>
            From
            <input type="datetime-local" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
          </label>
          <label>
            To
            <input type="datetime-local" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} />
          </label>
          <button type="submit" disabled={bad}>
            Show
          </button>
        </form>
      )}
      {!(isLive(range) && (PRESETS as readonly string[]).includes(range.window)) && (
        <span class="muted small" data-testid="range-label">
          {rangeLabel(range)}
        </span>
      )}
    </div>
  );
}
