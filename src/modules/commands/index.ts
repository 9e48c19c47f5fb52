/**
 * Node commands (docs/api.md, docs/protocol.md): issued over REST or the WebSocket proxy,
 * checked against the catalogue, delivered to the node that holds the connection (another
 * instance's in a cluster, src/cluster/bridge.ts), their records stored with their results.
 */
import type { CoreContext, Feature } from "../../core/context";
import { CommandRouter } from "./router";
import { commandsApi } from "./routes";

export { CommandRouter, type DeliverResult, type IssueResult, type RemoteCommands } from "./router";
export { CommandRecord } from "./routes";

export type CommandsFeature = Feature & { readonly router: CommandRouter };

export function commandsFeature(ctx: CoreContext): CommandsFeature {
  const router = new CommandRouter(ctx.registry, ctx.stores.commands, ctx.bus, ctx.log.child({ component: "commands" }));
  return { name: "commands", router, routes: commandsApi(router, ctx.stores.commands, ctx.security) };
}
