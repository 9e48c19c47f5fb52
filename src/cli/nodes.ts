/**
 * Read commands on the registry: `honeybee nodes`, `honeybee node show NODE`, `honeybee pots`.
 * With --json they print Core's own response bodies, so scripts get the documented shapes.
 */
import type { Command } from "commander";
import { ApiError } from "./client";
import { action, withConnection } from "./command";
import { CliError } from "./errors";
import { nodeDetail, nodesTable, potsTable } from "./format";

/** Adds a hint to "not registered" answers, which otherwise leave the operator guessing. */
export function explainNotFound(e: unknown): never {
  if (e instanceof ApiError && e.status === 404) throw new CliError(`${e.message}; list the nodes with "honeybee nodes"`);
  throw e;
}

export function registerNodeCommands(program: Command, nodeCommand: Command): void {
  withConnection(program.command("nodes").description("list the registered nodes")).action(
    action(async (ctx) => {
      const { nodes } = await ctx.api.listNodes();
      if (ctx.json) return ctx.printJson({ nodes });
      const { honeypots } = await ctx.api.listPots();
      ctx.out(nodesTable(nodes, honeypots, ctx.width));
    }),
  );

  withConnection(
    nodeCommand
      .command("show")
      .description("show one node and its honeypots")
      .argument("<node>", "node id, or node name"),
  ).action(
    action(async (ctx, [ref]) => {
      const node = await ctx.api.resolveNode(ref!);
      const detail = await ctx.api.node(node.node_id).catch(explainNotFound);
      if (ctx.json) return ctx.printJson(detail);
      ctx.out(nodeDetail(detail, ctx.width));
    }),
  );

  withConnection(
    program
      .command("pots")
      .alias("honeypots")
      .description("list the honeypots on every node")
      .option("--node <node>", "only the honeypots of this node (id or name)"),
  ).action(
    action<{ node?: string }>(async (ctx, _args, opts) => {
      const [{ honeypots }, { nodes }] = await Promise.all([ctx.api.listPots(), ctx.api.listNodes()]);
      let pots = honeypots;
      if (opts.node !== undefined) {
        const node = await ctx.api.resolveNode(opts.node);
        pots = pots.filter((p) => p.node_id === node.node_id);
      }
      if (ctx.json) return ctx.printJson({ honeypots: pots });
      ctx.out(potsTable(pots, nodes, ctx.width));
    }),
  );
}
