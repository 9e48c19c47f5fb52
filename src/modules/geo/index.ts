/**
 * GeoIP enrichment: the lookup Core opens from its config (the shipped DB-IP and IP-to-ASN
 * data, or the operator's MaxMind files, src/geo), and the committed events that carry its
 * answer for outputs and rules. Events on REST and the feed get theirs where they are written
 * out; the writers store each address's country and ASN for the filters and top lists.
 */
import type { CoreConfig } from "../../config";
import type { CoreContext } from "../../core/context";
import { geoLookup, type GeoLookup } from "../../geo";
import type { EventSource } from "../outputs";
import { withGeo } from "./committed";

export { withGeo, type GeoOf } from "./committed";

/** The lookup, or null with `geo_enrichment` off. Operator files are opened now, so a wrong path stops start-up with its name. */
export function openGeo(config: CoreConfig): GeoLookup | null {
  return config.geo_enrichment ? geoLookup({ geoipDb: config.geoip_db, asnDb: config.asn_db }) : null;
}

/** Committed events in id order, with `geo` when enrichment is on: what outputs and rules read. */
export function committedEvents(ctx: Pick<CoreContext, "stores" | "geo">): EventSource {
  const geo = ctx.geo;
  return geo ? withGeo(ctx.stores.committed, (ip) => geo.known(ip) ?? null) : ctx.stores.committed;
}
