/**
 * Stats: totals, the ingest counters, each output's and the rules' delivery state and the top
 * lists over a window, and the events-per-step timeline behind the console's charts.
 */
import type { CoreContext, Feature } from "../../core/context";
import { statsApi, type OutputsStats } from "./routes";
import { timelineApi } from "./timeline";

export { Stats } from "./schemas";
export { Timeline } from "./timeline";

export function statsFeature(ctx: CoreContext, deps: OutputsStats): Feature {
  const stats = statsApi({
    queries: ctx.stores.events,
    addresses: ctx.stores.addresses,
    ingest: ctx.ingest,
    counters: () => ctx.counters(),
    security: () => ctx.security.stats(),
    geo: ctx.geo,
    outputs: deps,
  });
  return { name: "stats", routes: stats.use(timelineApi(ctx.stores.timeline)) };
}
