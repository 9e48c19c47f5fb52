/**
 * What the attack map (attackmap.tsx, a chunk of its own) draws, read from Core: the sensors and
 * where they stand (GET /api/v1/nodes/{id} `location`), and for each placed sensor the countries
 * it saw over the range (GET /api/v1/stats with its node_id); and the map's legend.
 */
import { useEffect, useState } from "preact/hooks";
import { get, type NodeDetail, type NodeSummary, qs, type Stats, type TopEntry } from "./api";
import { ErrorNote, useAsync } from "./components";
import { num } from "./format";
import { rangeParams, type TimeRange } from "./timerange";
import "./map.css";

export type Sensor = Pick<NodeDetail, "node_id" | "node_name" | "location">;
/** Events of a source country seen by one sensor over the range. */
export interface Flow {
  country: string;
  node_id: string;
  count: number;
}

/** Every registered node with its location (null: not set). */
async function sensors(): Promise<Sensor[]> {
  const { nodes } = await get<{ nodes: NodeSummary[] }>("/api/v1/nodes");
  return Promise.all(nodes.map((n) => get<NodeDetail>(`/api/v1/nodes/${n.node_id}`).then((d) => ({ node_id: d.node_id, node_name: d.node_name, location: d.location }))));
}

/** The sensors and, per placed sensor, its source countries over the range. */
export function useAttackFlows(range: TimeRange) {
  return useAsync(async () => {
    const all = await sensors();
    const placed = all.filter((s) => s.location);
    const per = await Promise.all(placed.map((s) => get<Stats>("/api/v1/stats" + qs({ ...rangeParams(range), node_id: s.node_id, top: 50 }))));
    const flows: Flow[] = [];
    per.forEach((st, i) => {
      for (const c of st.top.countries ?? []) flows.push({ country: c.value, node_id: placed[i]!.node_id, count: c.count });
    });
    return { sensors: all, flows };
  }, [JSON.stringify(range)]);
}

type MapProps = { rows: TopEntry[]; sensors: Sensor[]; flows: Flow[]; live: boolean };

export function LazyAttackMap(props: MapProps) {
  const [Map, setMap] = useState<null | ((p: MapProps) => preact.JSX.Element)>(null);
  const [error, setError] = useState<Error | null>(null);
  useEffect(() => {
    import("./attackmap").then((m) => setMap(() => m.default), setError);
  }, []);
  if (error) return <ErrorNote error={error} />;
  return Map ? <Map {...props} /> : <div class="world" aria-busy="true" />;
}

/** The scale (events per country, log), what arcs mean, and every sensor: placed, or how to place it. */
export function MapLegend({ rows, sensors, live }: { rows: TopEntry[]; sensors: Sensor[]; live: boolean }) {
  const max = Math.max(0, ...rows.map((r) => r.count));
  return (
    <div class="map-legend" data-testid="map-legend">
      <span class="scale">
        <span>{rows.length ? 1 : 0}</span>
        <span class="ramp" aria-hidden="true" />
        <span>{num(max)} events per country</span>
      </span>
      <span>
        <span class="key-arc" aria-hidden="true" /> arc: a source country to the sensor that saw it (wider: more){live ? "; new events flash in as they come" : ""}
      </span>
      <span data-testid="map-sensors">
        Sensors:{" "}
        {sensors.length === 0
          ? "none registered"
          : sensors.map((s, i) => (
              <span key={s.node_id}>
                {i > 0 && ", "}
                <span class={s.location ? "key-sensor" : "key-sensor none"} aria-hidden="true" /> {s.node_name}
                {s.location ? (s.location.label ? ` (${s.location.label})` : "") : <span class="muted"> (no location: honeybee node locate {s.node_name} LAT LON)</span>}
              </span>
            ))}
      </span>
    </div>
  );
}
