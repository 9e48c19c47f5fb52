// Placeholder: the node agent's `honeybee node` subcommand is registered here.
import type { Command } from "commander";

export function registerNodeCommand(program: Command): void {
  program.command("node").description("run a node agent (not built yet)").action(() => {
    console.error("honeybee node: not built yet");
    process.exit(1);
  });
}
