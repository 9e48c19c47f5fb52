/**
 * A world map of attack sources: countries shaded by their count. Loaded on demand (a chunk
 * of its own: d3-geo, the world-atlas TopoJSON, ISO codes), so pages without it stay small.
 * Countries come as ISO 3166-1 alpha-2 codes (GeoIP) or as names.
 */
import { geoCentroid, geoEqualEarth, geoPath } from "d3-geo";
import { alpha2ToNumeric } from "i18n-iso-countries";
import { feature } from "topojson-client";
import type { GeometryCollection, Topology } from "topojson-specification";
import world from "world-atlas/countries-110m.json";
import type { TopEntry } from "./api";
import { num } from "./format";

export const WIDTH = 960;
export const HEIGHT = 470;
const topo = world as unknown as Topology<{ countries: GeometryCollection<{ name: string }> }>;
const countries = feature(topo, topo.objects.countries).features;
export const projection = geoEqualEarth().fitSize([WIDTH, HEIGHT], { type: "Sphere" });
export const path = geoPath(projection);
// Drawn once: the shapes never change, only their shading.
export const shapes = countries.map((f) => ({ id: String(f.id ?? ""), name: f.properties.name, d: path(f) ?? "" }));

/** Where a country's dot and arcs start: its centroid, by ISO numeric code, projected. */
export const centroids = new Map<string, [number, number]>();
for (const f of countries) {
  const p = projection(geoCentroid(f));
  if (p && f.id !== undefined) centroids.set(String(f.id), p);
}

export function keyOf(value: string): string {
  return value.length === 2 ? (alpha2ToNumeric(value.toUpperCase()) ?? value) : value.toLowerCase();
}

/** A log scale: one loud country must not wash out all the others. */
export const shadeOf = (n: number, max: number) => (n > 0 ? 0.15 + (0.85 * Math.log1p(n)) / Math.log1p(max) : 0);

export default function WorldMap({ rows, children }: { rows: TopEntry[]; children?: preact.ComponentChildren }) {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(keyOf(r.value), r.count);
  const max = Math.max(1, ...rows.map((r) => r.count));
  return (
    <svg class="world" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label="World map of attack sources by country">
      <path class="sphere" d={path({ type: "Sphere" }) ?? ""} />
      {shapes.map((s) => {
        const n = counts.get(s.id) ?? counts.get(s.name.toLowerCase()) ?? 0;
        const shade = shadeOf(n, max);
        return (
          <path key={s.id + s.name} d={s.d} class={n > 0 ? "land hit" : "land"} style={n > 0 ? { fillOpacity: shade } : undefined}>
            <title>{n > 0 ? `${s.name}: ${num(n)} events` : s.name}</title>
          </path>
        );
      })}
      {children}
    </svg>
  );
}
