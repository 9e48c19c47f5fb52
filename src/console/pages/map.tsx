/**
 * Where attacks come from over the picked time range (timerange.tsx; the last 7 days unless the
 * URL says otherwise): countries and networks from GET /api/v1/stats when Core enriches events
 * with GeoIP (top.countries, top.asns); until then, says it is not available. The attack map
 * (arcs.tsx, attackmap.tsx) draws arcs from source countries to the sensors that saw them, and
 * over a range up to now the live feed's new events; the countries' table is beside it. Each
 * country and network links to its events over the same range.
 */
import { get, qs, type Stats } from "../api";
import { LazyAttackMap, MapLegend, useAttackFlows } from "../arcs";
import { Card, ErrorNote, TopTable, Unavailable, useAsync } from "../components";
import { asName, countryName } from "../format";
import { drillHref } from "../links";
import { isLive, linkRange, rangeParams, rangeShort, readRange, TimeRangePicker } from "../timerange";

const DEFAULT_RANGE = "7d";

export function MapPage({ query }: { query: URLSearchParams }) {
  const range = readRange(query, DEFAULT_RANGE);
  const r = useAsync(() => get<Stats>("/api/v1/stats" + qs({ ...rangeParams(range), top: 50 })), [JSON.stringify(range)]);
  const flows = useAttackFlows(range);
  const top = r.data?.top;
  const span = rangeShort(range);
  const where = linkRange(query, range);
  return (
    <main id="main">
      <div class="page-head">
        <h1>Attack sources</h1>
        <TimeRangePicker range={range} fallback={DEFAULT_RANGE} />
      </div>
      <ErrorNote error={r.error} />
      {top && !top.countries && <Unavailable what="Countries and networks (GeoIP)" api="top.countries and top.asns in GET /api/v1/stats" />}
      <ErrorNote error={flows.error} />
      {top?.countries && (
        <div class="map-grid">
          <Card title={`Events by country (${span})`} id="world">
            <LazyAttackMap rows={top.countries} sensors={flows.data?.sensors ?? []} flows={flows.data?.flows ?? []} live={isLive(range)} />
            <MapLegend rows={top.countries} sensors={flows.data?.sensors ?? []} live={isLive(range)} />
          </Card>
          <Card title={`Countries (${span})`} id="countries">
            <TopTable rows={top.countries} label="country" show={(r) => countryName(r.value)} href={(v) => drillHref("country", v, where)} testid="countries" />
          </Card>
        </div>
      )}
      {top?.countries && (
        <Card title={`Networks (${span})`} id="asns">
          <TopTable rows={top.asns} label="ASN" show={(r) => asName(r.value, r.as_org)} href={(v) => drillHref("asn", v, where)} testid="asns" />
        </Card>
      )}
      {r.data?.geo_attribution && (
        <p class="muted" data-testid="geo-credit">
          Countries: {r.data.geo_attribution.country}. Networks: {r.data.geo_attribution.asn}.
        </p>
      )}
    </main>
  );
}
