/**
 * Alert rules (docs/outputs.md): a reader of the committed events that raises alerts, stored
 * as events and shipped by the outputs. REST defines them; a rule may name only outputs that
 * exist.
 */
import type { CoreContext, Feature } from "../../core/context";
import { committedEvents } from "../geo";
import { rulesApi } from "./routes";
import { Rules } from "./service";

export { RuleInfo, RulesStatus } from "./schemas";
export { Rules } from "./service";

export type RulesFeature = Feature & { readonly rules: Rules };

export function rulesFeature(ctx: CoreContext, deps: { hasOutput: (name: string) => boolean }): RulesFeature {
  const rules = new Rules({ store: ctx.stores.outputs, source: committedEvents(ctx), ingest: ctx.ingest, logger: ctx.log.child({ component: "rules" }) });
  return {
    name: "rules",
    rules,
    routes: rulesApi(rules, deps.hasOutput),
    start: () => rules.start(ctx.config.rules),
    stop: () => rules.stop(),
  };
}
