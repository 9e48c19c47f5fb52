/**
 * Indicators (docs/threat-data.md): attackers' addresses, credentials, URLs and file hashes as
 * CSV, STIX 2.1 or MISP, and the blocklist for firewalls (never the nodes' own addresses).
 */
import type { CoreContext, Feature } from "../../core/context";
import { indicatorsApi } from "./routes";

export function indicatorsFeature(ctx: CoreContext): Feature {
  return { name: "indicators", routes: indicatorsApi({ indicators: ctx.stores.indicators, ingest: ctx.ingest, geo: ctx.geo, registry: ctx.registry }) };
}
