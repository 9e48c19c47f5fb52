/** Nodes: the registered sensors and their state (the registry, src/core/registry.ts, keeps them). */
import type { CoreContext, Feature } from "../../core/context";
import { nodeList, nodesApi } from "./routes";

export { NodeDetail, NodeList, NodeSummary } from "./schemas";

export function nodesFeature(ctx: CoreContext): Feature {
  const list = nodeList(ctx.registry);
  return { name: "nodes", routes: nodesApi(ctx.registry, list), reads: { "/api/v1/nodes": list } };
}
