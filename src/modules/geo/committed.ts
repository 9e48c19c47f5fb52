/**
 * Where GeoIP enrichment plugs into outputs and rules: a source whose events carry `geo`
 * (`{country, asn, as_org}`) from a lookup by source address. With it, ECS lines get
 * `source.geo`/`source.as`, CEF and LEEF the country and ASN, and rules on `country`, `asn` and
 * `geo.*` match; without it those rules match nothing (docs/outputs.md, "Country and ASN").
 */
import type { EventSource, Geo, OutEvent } from "../outputs";

export type GeoOf = (ip: string) => Geo | null;

export function withGeo(source: EventSource, geoOf: GeoOf): EventSource {
  const enrich = (events: OutEvent[]) =>
    events.map((e): OutEvent => {
      if (e.geo === undefined && e.src_ip !== null) {
        const geo = geoOf(e.src_ip);
        if (geo) e.geo = geo;
      }
      return e;
    });
  return {
    lastId: () => source.lastId(),
    after: (position, limit) => {
      const events = source.after(position, limit);
      return events instanceof Promise ? events.then(enrich) : enrich(events);
    },
  };
}
