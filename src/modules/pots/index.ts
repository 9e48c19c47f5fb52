/** Honeypots: the list across every node (the registry holds them; commands change them). */
import type { CoreContext, Feature } from "../../core/context";
import { potList, potsApi } from "./routes";

export { potFields } from "./routes";
export { Honeypot, HoneypotInNode, HoneypotList } from "./schemas";

export function potsFeature(ctx: CoreContext): Feature {
  const list = potList(ctx.registry);
  return { name: "pots", routes: potsApi(list), reads: { "/api/v1/honeypots": list } };
}
