/** The operator's console (docs/console.md): the Preact app in src/console, bundled and served by Core. */
import type { CoreContext, Feature } from "../../core/context";
import { consoleApi } from "./routes";

export function consoleFeature(ctx: CoreContext): Feature {
  return { name: "console", routes: consoleApi(ctx.log.child({ component: "console" })) };
}
