/**
 * Where attacks come from: countries and networks from GET /api/v1/stats when Core enriches
 * events with GeoIP (top.countries, top.asns); until then, says it is not available.
 */
import { get, type Stats } from "../api";
import { Card, ErrorNote, LazyWorldMap, TopTable, Unavailable, useAsync } from "../components";
import { asName, countryName } from "../format";

export function MapPage() {
  const r = useAsync(() => get<Stats>("/api/v1/stats?window=7d&top=50"), []);
  const top = r.data?.top;
  return (
    <main id="main">
      <h1>Attack sources</h1>
      <ErrorNote error={r.error} />
      {top && !top.countries && <Unavailable what="Countries and networks (GeoIP)" api="top.countries and top.asns in GET /api/v1/stats" />}
      {top?.countries && (
        <Card title="Events by country (7 days)" id="world">
          <LazyWorldMap rows={top.countries} />
        </Card>
      )}
      {top?.countries && (
        <div class="grid2">
          <Card title="Countries (7 days)" id="countries">
            <TopTable rows={top.countries} label="country" show={(r) => countryName(r.value)} href={(v) => `/events?country=${encodeURIComponent(v)}`} testid="countries" />
          </Card>
          <Card title="Networks (7 days)" id="asns">
            <TopTable rows={top.asns} label="ASN" show={(r) => asName(r.value, r.as_org)} testid="asns" />
          </Card>
        </div>
      )}
      {r.data?.geo_attribution && (
        <p class="muted" data-testid="geo-credit">
          Countries: {r.data.geo_attribution.country}. Networks: {r.data.geo_attribution.asn}.
        </p>
      )}
    </main>
  );
}
