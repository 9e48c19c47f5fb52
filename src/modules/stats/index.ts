/**
 * Stats: totals, the ingest counters, each output's and the rules' delivery state and the top
 * lists over a time range (of a node, pot or kind if asked), the events-per-step timeline behind
 * the console's charts, and the top values of any data field (the kinds' dashboards).
 */
import type { CoreContext, Feature } from "../../core/context";
import { statsApi, type OutputsStats } from "./routes";
import { timelineApi } from "./timeline";
import { fieldTopApi } from "./field-top";

export { FieldTop, Stats, Timeline } from "./schemas";

export function statsFeature(ctx: CoreContext, deps: OutputsStats): Feature {
  const nodes = () => ctx.registry.listNodes();
  const stats = statsApi({
    queries: ctx.stores.events,
    addresses: ctx.stores.addresses,
    ingest: ctx.ingest,
    counters: () => ctx.counters(),
    security: () => ctx.security.stats(),
    geo: ctx.geo,
    outputs: deps,
    nodes,
  });
  return { name: "stats", routes: stats.use(timelineApi(ctx.stores.timeline, nodes)).use(fieldTopApi({ queries: ctx.stores.events, ingest: ctx.ingest, nodes })) };
}
