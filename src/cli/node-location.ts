/**
 * `honeybee node locate NODE LAT LON [--label NAME]`: where a sensor stands, for the console's
 * attack map (PUT /api/v1/nodes/{node_id}/location; an operator's token when tokens are set).
 */
import { type Command, InvalidArgumentError } from "commander";
import { action, withConnection } from "./command";
import { explainNotFound } from "./nodes";

/** A commander argParser for degrees in [-max, max]. */
function degrees(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^-?\d+(\.\d+)?$/.test(value) || Math.abs(n) > max) throw new InvalidArgumentError(`expected degrees from -${max} to ${max}, e.g. 50.11`);
    return n;
  };
}

export function registerNodeLocationCommand(nodeCommand: Command): void {
  withConnection(
    nodeCommand
      .command("locate")
      .description("set where a node stands: the console's map draws attacks to it")
      .argument("<node>", "node id, or node name")
      .argument("<lat>", "latitude in degrees, -90 to 90 (south is negative)", degrees(90))
      .argument("<lon>", "longitude in degrees, -180 to 180 (west is negative)", degrees(180))
      .option("--label <name>", "a place name for the map's legend, e.g. Frankfurt"),
  ).action(
    action<{ label?: string }>(async (ctx, args, { label }, cmd) => {
      const [lat, lon] = cmd.processedArgs.slice(1) as [number, number];
      const node = await ctx.api.resolveNode(args[0]!);
      const location = await ctx.api.put(`/api/v1/nodes/${node.node_id}/location`, { lat, lon, label: label ?? null }).catch(explainNotFound);
      if (ctx.json) return ctx.printJson(location);
      ctx.out(`${node.node_name} (${node.node_id}) stands at ${lat}, ${lon}${label ? ` (${label})` : ""}`);
    }),
  );
}
