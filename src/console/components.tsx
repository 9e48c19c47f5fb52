/** Pieces every page uses: loading and error states, tables of top values, badges, charts. */
import type { ComponentChildren } from "preact";
import { createContext } from "preact";
import { useContext, useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { ApiError, type Me, type TopEntry } from "./api";
import { asName, countryName, num, summary } from "./format";
import { type DrillKind, drillHref, kindOfLabel, type Scope } from "./links";

export const MeContext = createContext<Me>({ name: "anonymous", role: "operator", auth_enabled: false });
export const useMe = () => useContext(MeContext);

export interface Async<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change and on `reload()`; keeps the last data while reloading (no layout jump). */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error) => live && setState((s) => ({ data: s.data, error, loading: false })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((n) => n + 1) };
}

export function useInterval(fn: () => void, ms: number): void {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const id = setInterval(() => ref.current(), ms);
    return () => clearInterval(id);
  }, [ms]);
}

export function ErrorNote({ error }: { error: Error | null }) {
  if (!error) return null;
  const code = error instanceof ApiError ? `${error.status} ${error.code}: ` : "";
  return (
    <p class="error" role="alert">
      {code}
      {error.message}
    </p>
  );
}

/** What a page shows where this Core lacks an API (an older Core, or a feature not merged yet). */
export function Unavailable({ what, api }: { what: string; api: string }) {
  return (
    <div class="unavailable" role="status">
      <strong>{what}: not available on this Core.</strong> It needs <code>{api}</code>, which this Core does not serve. This page lights up when Core is updated.
    </div>
  );
}

export function Card({ title, children, class: cls, id }: { title: ComponentChildren; children: ComponentChildren; class?: string; id?: string }) {
  return (
    <section class={"card " + (cls ?? "")} aria-labelledby={id && id + "-h"} id={id}>
      <h2 id={id && id + "-h"}>{title}</h2>
      {children}
    </section>
  );
}

export function Status({ value }: { value: string }) {
  const v = value.toLowerCase();
  const tone = /running|connected|succeeded|open/.test(v) ? "ok" : /fail|error|stopped|unknown|closed|crash/.test(v) ? "bad" : "mid";
  return <span class={"badge " + tone}>{value}</span>;
}

/**
 * A value of a table as a link to what it drills down to (links.ts): the events it filters, or
 * an address's attacker page. The value is isolated (see below); "–" when there is none.
 */
export function DrillLink({ kind, value, scope, children }: { kind: DrillKind; value: string | number | null | undefined; scope?: Scope; children?: ComponentChildren }) {
  if (value === null || value === undefined || value === "") return <>–</>;
  return (
    <bdi>
      <a href={drillHref(kind, String(value), scope)}>{children ?? String(value)}</a>
    </bdi>
  );
}

/** How a top list shows a value of a kind: countries by name, networks with theirs. */
function shown(kind: DrillKind | undefined): (r: TopEntry) => string {
  if (kind === "country") return (r) => countryName(r.value);
  if (kind === "asn") return (r) => asName(r.value, r.as_org);
  return (r) => r.value;
}

/**
 * A top-N list as a table with bars. Each value is a link: `href` when given, else to what the
 * values' `kind` drills down to (read from `label` when not given: "address", "username",
 * "country"...), narrowed by `scope` (a dashboard's pot or node, its time range).
 */
export function TopTable({ rows, label, href, testid, show, kind, scope }: { rows: TopEntry[] | undefined; label: string; href?: (v: string) => string; testid?: string; show?: (r: TopEntry) => string; kind?: DrillKind; scope?: Scope }) {
  if (!rows) return null;
  const k = kind ?? kindOfLabel(label);
  href ??= k && ((v: string) => drillHref(k, v, scope));
  show ??= shown(k);
  const max = rows[0]?.count ?? 1;
  return (
    <table class="top" data-testid={testid}>
      <thead>
        <tr>
          <th scope="col">{label}</th>
          <th scope="col" class="n">
            events
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 && (
          <tr>
            <td colSpan={2} class="muted">
              none yet
            </td>
          </tr>
        )}
        {rows.map((r) => (
          <tr key={r.value}>
            <td class="bar-cell">
              <span class="bar" style={{ width: `${(100 * r.count) / max}%` }} />
              <bdi class="val">{href ? <a href={href(r.value)}>{show(r)}</a> : show(r)}</bdi>
            </td>
            <td class="n">{num(r.count)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/*
 * Attackers choose what they type, and a right-to-left override (U+202E) in it turns the rest
 * of its line around: "\u202eevil / pw" reads "wp / live". HTML isolates each table cell, list
 * item and paragraph; within one, each of their values goes in a <bdi>, which isolates it.
 */

/** A username and password as the attacker typed them, each isolated, each a link to the events that tried it. */
export function Credentials({ username, password }: { username: unknown; password: unknown }) {
  const part = (kind: "username" | "password", v: unknown) =>
    typeof v === "string" ? (
      <bdi>
        <a href={drillHref(kind, v)}>{v}</a>
      </bdi>
    ) : (
      <bdi>{String(v ?? "")}</bdi>
    );
  return (
    <>
      {part("username", username)} / {part("password", password)}
    </>
  );
}

/**
 * An event's summary (format.ts) with the attacker's values isolated; credentials, commands
 * and an SSH client's HASSH are links to the events that share them.
 */
export function Summary({ e }: { e: { event_type: string; data: Record<string, any> } }) {
  const d = e.data ?? {};
  if (d.username !== undefined && d.password !== undefined) return <Credentials username={d.username} password={d.password} />;
  if (typeof d.input === "string" && d.input !== "") return <DrillLink kind="command" value={d.input} />;
  if (typeof d.hassh === "string" && /^[0-9a-f]{32}$/.test(d.hassh)) {
    return (
      <>
        SSH client HASSH <DrillLink kind="hassh" value={d.hassh} />
      </>
    );
  }
  const text = summary(e);
  return text ? <bdi>{text}</bdi> : null;
}

/** An event's address, honeypot, type and summary cells, each value a drill-down link (events, /live). */
export function EventCells({ e, whatClass = "ellipsis" }: { e: { src_ip: string | null; pot_id: string | null; node_id: string | null; event_type: string; data: Record<string, any> }; whatClass?: string }) {
  return (
    <>
      <td class="mono">
        <DrillLink kind="src_ip" value={e.src_ip} />
      </td>
      <td>
        <DrillLink kind="pot_id" value={e.pot_id} scope={{ node_id: e.node_id }} />
      </td>
      <td class="mono">
        <DrillLink kind="event_type" value={e.event_type} />
      </td>
      <td class={whatClass}>
        <Summary e={e} />
      </td>
    </>
  );
}

// The formatting characters of bidi (embeddings, overrides, isolates, marks) as JSON escapes:
// still the same JSON, and the reader sees them instead of text turned around.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function Json({ value }: { value: unknown }) {
  const text = JSON.stringify(value, null, 2).replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return <pre class="json">{text}</pre>;
}

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/**
 * A bar chart of counts per step (uPlot: canvas, ~20 KB gzip, built for time series that
 * update often). `version` changes when `counts` changed in place.
 */
export function StepChart({ start, stepMs, counts, version, label, height = 160 }: { start: number; stepMs: number; counts: number[]; version: number; label: string; height?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const data = (): uPlot.AlignedData => [counts.map((_, i) => (start + i * stepMs) / 1000), counts];
  useEffect(() => {
    const el = box.current!;
    const accent = css("--accent") || "#e0a100";
    const fg = css("--muted") || "#888";
    const grid = css("--line") || "#333";
    const axis = { stroke: fg, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const opts: uPlot.Options = {
      width: el.clientWidth || 600,
      height,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [axis, { ...axis, size: 48 }],
      series: [{}, { label, stroke: accent, fill: accent + "55", width: 1, paths: uPlot.paths.bars!({ size: [0.9, 20] }), points: { show: false } }],
    };
    plot.current = new uPlot(opts, data(), el);
    const ro = new ResizeObserver(() => plot.current?.setSize({ width: el.clientWidth, height }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [height]);
  useEffect(() => {
    plot.current?.setData(data());
  }, [start, version, counts]);
  return <div class="chart" ref={box} style={{ height: height + "px" }} role="img" aria-label={label} />;
}

/** The world map, loaded when first shown (./worldmap.tsx). */
export function LazyWorldMap({ rows }: { rows: TopEntry[] }) {
  const [Map, setMap] = useState<null | ((p: { rows: TopEntry[] }) => preact.JSX.Element)>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    import("./worldmap").then((m) => setMap(() => m.default), setError);
  }, []);
  if (error) return <ErrorNote error={error} />;
  return Map ? <Map rows={rows} /> : <div class="world" aria-busy="true" />;
}
