/**
 * The attack map (issue 34, 4), loaded on demand with the world map: countries shaded by their
 * count, a dot at each source country's centroid (so that Singapore or Malta show as well as
 * Russia), the sensors where their operators placed them (PUT /api/v1/nodes/{id}/location), an
 * arc from each source country to each sensor that saw it (the top ones, wider for more), and
 * the live feed's new events as arcs on a canvas that fade out in two seconds. The SVG holds a
 * few hundred nodes that change with the range only; the canvas redraws only while arcs fade.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import type { TopEntry } from "./api";
import type { Flow, Sensor } from "./arcs";
import { openFeed } from "./feed";
import { countryName, num } from "./format";
import WorldMap, { centroids, HEIGHT, keyOf, projection, WIDTH } from "./worldmap";

/** Static arcs drawn: the largest flows; the table lists every country anyway. */
const TOP_ARCS = 40;
const FADE_MS = 2000;
/** Live arcs at once; at hundreds of events a second most share a country and a sensor and restart theirs. */
const MAX_LIVE = 300;

type Point = [number, number];

/** Countries too small for the 110m shapes (Singapore, Malta, Bahrain...) take their centroid from the 50m ones, loaded when one is needed. */
let fine: Promise<void> | null = null;
function loadFineCentroids(): Promise<void> {
  fine ??= Promise.all([import("world-atlas/countries-50m.json"), import("topojson-client"), import("d3-geo")]).then(([w, topo, geo]) => {
    const t = (w.default ?? w) as any;
    for (const f of (topo.feature(t, t.objects.countries) as any).features) {
      const id = String(f.id ?? "");
      if (id && !centroids.has(id)) {
        const p = projection(geo.geoCentroid(f));
        if (p) centroids.set(id, p);
      }
    }
  });
  return fine;
}

const centroidOf = (country: string): Point | null => centroids.get(keyOf(country)) ?? null;
const sensorPoint = (s: Sensor): Point | null => (s.location ? projection([s.location.lon, s.location.lat]) : null);

/** A quadratic curve from a to b, bent to the left of its direction by a quarter of its length. */
function bend(a: Point, b: Point): Point {
  const [dx, dy] = [b[0] - a[0], b[1] - a[1]];
  return [(a[0] + b[0]) / 2 + dy * 0.25, (a[1] + b[1]) / 2 - dx * 0.25];
}
const arcD = (a: Point, b: Point) => {
  const c = bend(a, b);
  return `M${a[0].toFixed(1)},${a[1].toFixed(1)}Q${c[0].toFixed(1)},${c[1].toFixed(1)} ${b[0].toFixed(1)},${b[1].toFixed(1)}`;
};

export default function AttackMap({ rows, sensors, flows, live }: { rows: TopEntry[]; sensors: Sensor[]; flows: Flow[]; live: boolean }) {
  const [, setFineLoaded] = useState(0);
  const needed = [...rows.map((r) => r.value), ...flows.map((f) => f.country)];
  useEffect(() => {
    if (needed.some((c) => !centroidOf(c))) loadFineCentroids().then(() => setFineLoaded((n) => n + 1), () => {});
  }, [needed.join()]);

  const max = Math.max(1, ...rows.map((r) => r.count));
  const located = new Map<string, Point>();
  for (const s of sensors) {
    const p = sensorPoint(s);
    if (p) located.set(s.node_id, p);
  }
  const top = [...flows].sort((a, b) => b.count - a.count).slice(0, TOP_ARCS);
  const topMax = Math.max(1, ...top.map((f) => f.count));
  return (
    <div class="attack-map">
      <WorldMap rows={rows}>
        <g class="arcs">
          {top.map((f) => {
            const a = centroidOf(f.country);
            const b = located.get(f.node_id);
            if (!a || !b) return null;
            return (
              <path key={`${f.country}>${f.node_id}`} d={arcD(a, b)} data-testid="arc" data-from={f.country} data-to={f.node_id} style={{ strokeWidth: 0.8 + (3 * Math.log1p(f.count)) / Math.log1p(topMax) }}>
                <title>{`${countryName(f.country)} → ${sensors.find((s) => s.node_id === f.node_id)?.node_name}: ${num(f.count)} events`}</title>
              </path>
            );
          })}
        </g>
        <g class="dots">
          {rows.map((r) => {
            const p = centroidOf(r.value);
            return p ? <circle key={r.value} cx={p[0]} cy={p[1]} r={2 + (4 * Math.sqrt(r.count)) / Math.sqrt(max)} data-country={r.value} /> : null;
          })}
        </g>
        <g class="sensors">
          {sensors.map((s) => {
            const p = located.get(s.node_id);
            return p ? (
              <g key={s.node_id} data-testid="sensor" data-node={s.node_id} transform={`translate(${p[0].toFixed(1)},${p[1].toFixed(1)})`}>
                <circle r="6" />
                <text x="8" y="4">
                  {s.location?.label || s.node_name}
                </text>
                <title>{`${s.node_name}${s.location?.label ? ` (${s.location.label})` : ""}`}</title>
              </g>
            ) : null;
          })}
        </g>
      </WorldMap>
      {live && <LiveArcs sensors={located} />}
    </div>
  );
}

interface LiveArc {
  a: Point;
  b: Point;
  c: Point;
  t0: number;
}

/**
 * New events from the live feed (PotEvent, with the `geo` Core adds) as arcs on a canvas over the
 * map. One arc per source country and sensor: another event on it restarts its fade. The canvas
 * says what it drew last in data attributes (for tests and the curious), nothing else in the DOM moves.
 */
function LiveArcs({ sensors }: { sensors: Map<string, Point> }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const where = useRef(sensors);
  where.current = sensors;
  useEffect(() => {
    const el = canvas.current!;
    const ctx = el.getContext("2d")!;
    const arcs = new Map<string, LiveArc>();
    let frame = 0;
    const color = getComputedStyle(el).color;
    const draw = (now: number) => {
      frame = 0;
      const w = el.clientWidth;
      const h = el.clientHeight;
      const dpr = window.devicePixelRatio || 1;
      if (el.width !== Math.round(w * dpr) || el.height !== Math.round(h * dpr)) {
        el.width = Math.round(w * dpr);
        el.height = Math.round(h * dpr);
      }
      ctx.setTransform((dpr * w) / WIDTH, 0, 0, (dpr * h) / HEIGHT, 0, 0);
      ctx.clearRect(0, 0, WIDTH, HEIGHT);
      ctx.strokeStyle = color;
      ctx.fillStyle = color;
      ctx.lineWidth = 1.5;
      for (const [key, arc] of arcs) {
        const age = (now - arc.t0) / FADE_MS;
        if (age >= 1) {
          arcs.delete(key);
          continue;
        }
        ctx.globalAlpha = 1 - age;
        ctx.beginPath();
        ctx.moveTo(arc.a[0], arc.a[1]);
        ctx.quadraticCurveTo(arc.c[0], arc.c[1], arc.b[0], arc.b[1]);
        ctx.stroke();
        // The head travels to the sensor in the first half of the fade.
        const t = Math.min(1, age * 2);
        const x = (1 - t) ** 2 * arc.a[0] + 2 * (1 - t) * t * arc.c[0] + t * t * arc.b[0];
        const y = (1 - t) ** 2 * arc.a[1] + 2 * (1 - t) * t * arc.c[1] + t * t * arc.b[1];
        ctx.fillRect(x - 2, y - 2, 4, 4);
      }
      ctx.globalAlpha = 1;
      el.dataset.live = String(arcs.size);
      if (arcs.size > 0) frame = requestAnimationFrame(draw);
    };
    const stop = openFeed({
      kinds: ["PotEvent"],
      onState: (state) => {
        el.dataset.feed = state;
      },
      onMessage: (kind, e) => {
        if (kind !== "PotEvent" || !e?.geo?.country || e.node_id == null) return;
        const node = String(e.node_id);
        const b = where.current.get(node);
        const a = b && centroidOf(e.geo.country);
        if (!a || !b) return;
        const key = `${e.geo.country}>${node}`;
        const old = arcs.get(key);
        if (old) old.t0 = performance.now();
        else if (arcs.size < MAX_LIVE) arcs.set(key, { a, b, c: bend(a, b), t0: performance.now() });
        else return;
        el.dataset.last = key;
        if (!frame) frame = requestAnimationFrame(draw);
      },
    });
    return () => {
      stop();
      cancelAnimationFrame(frame);
    };
  }, []);
  return <canvas ref={canvas} class="live-arcs" data-testid="live-arcs" />;
}
