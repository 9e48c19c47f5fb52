/**
 * Outputs (docs/outputs.md): where events and alerts are shipped. The service runs each
 * output as a reader of the committed events; REST defines them. Rules run on the same reader
 * engine (reader.ts) and take its public parts from here.
 */
import type { CoreContext, Feature } from "../../core/context";
import { committedEvents } from "../geo";
import { outputsApi } from "./routes";
import { Outputs } from "./service";

export { ALERT_PREFIX, fieldOf, globRegex, isAlert, type Geo, type OutEvent } from "./event";
export { firstError, Name } from "./model";
export { StoreReader, type EventSource, type ReaderStatus } from "./reader";
export { OutputInfo, OutputStatus, ReaderFields } from "./schemas";
export { Outputs } from "./service";

export type OutputsFeature = Feature & { readonly outputs: Outputs };

export function outputsFeature(ctx: CoreContext): OutputsFeature {
  const outputs = new Outputs({ store: ctx.stores.outputs, source: committedEvents(ctx), logger: ctx.log.child({ component: "outputs" }) });
  return {
    name: "outputs",
    outputs,
    routes: outputsApi(outputs),
    start: () => outputs.start(ctx.config.outputs),
    stop: () => outputs.stop(),
  };
}
