/** Events: the stored events with their filters, one event, and the live stream on the REST port. */
import type { CoreContext, Feature } from "../../core/context";
import { eventList, eventsApi } from "./routes";
import { streamApi } from "./stream";

export { DEFAULT_PAGE, EventPage, EventRecord, GeoRecord, MAX_PAGE, eventPageJson, toEventRecord } from "./routes";

export function eventsFeature(ctx: CoreContext): Feature {
  const list = eventList(ctx.stores.events, { ingest: ctx.ingest, geo: ctx.geo, nodes: () => ctx.registry.listNodes() });
  return {
    name: "events",
    routes: eventsApi({ events: ctx.stores.events, geo: ctx.geo, list }).use(streamApi(ctx.hub)),
    reads: { "/api/v1/events": list },
  };
}
