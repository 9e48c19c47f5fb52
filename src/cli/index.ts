/**
 * The management commands of `honeybee`, registered on the program that main.ts builds:
 * nodes, node show, node locate, pots, install, start, stop, restart, status, logs, metrics, remove, events,
 * stats, sessions, session, artifacts, catalogue, up.
 */
import type { Command } from "commander";
import { registerArtifactCommands } from "./artifacts";
import { registerCatalogueCommand } from "./catalogue";
import { registerEventCommands } from "./events";
import { registerNodeLocationCommand } from "./node-location";
import { registerNodeCommands } from "./nodes";
import { registerPotAnswerCommands } from "./pot-answers";
import { registerPotCommands } from "./pots";
import { registerSessionCommands } from "./sessions";
import { registerUpCommand } from "./up";

export function registerCliCommands(program: Command): void {
  registerUpCommand(program);
  // `node show` lives under the node agent's `node` command: `honeybee node --core ...` runs the
  // agent, `honeybee node show ID` reads the registry. Created here if the agent is absent.
  const node = program.commands.find((c) => c.name() === "node") ?? program.command("node").description("node agent and node details");
  registerNodeCommands(program, node);
  registerNodeLocationCommand(node);
  registerPotCommands(program);
  registerPotAnswerCommands(program);
  registerEventCommands(program);
  registerSessionCommands(program);
  registerArtifactCommands(program);
  registerCatalogueCommand(program);
}
