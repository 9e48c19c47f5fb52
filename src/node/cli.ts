/**
 * `honeybee node`: parses flags into the node configuration and runs the agent until
 * SIGINT/SIGTERM, when it stops its honeypots and says NodeDrop before exiting.
 */
import type { Command } from "commander";
import { flagsToConfig } from "../config";
import { createLogger } from "../log";
import { stopOnSignals } from "../signals";
import { startNode } from "./agent";
import { loadNodeConfig, NodeConfig } from "./config";
import { configOptions, NODE_FLAG_KEYS } from "../cli/config-options";

export function registerNodeCommand(program: Command): void {
  const node = program
    .command("node")
    .description("run a node agent: register with Core, install and supervise honeypots, relay their events")
    .option("--config <file>", "JSON config file with the keys below (snake_case)");
  for (const option of configOptions(NodeConfig, NODE_FLAG_KEYS, { name: "the host name" })) node.addOption(option);
  node
    .action(async (opts: Record<string, string | undefined>) => {
      const config = loadNodeConfig(flagsToConfig(opts));
      const agent = await startNode(config, createLogger(config.log_level));
      stopOnSignals(() => agent.stop(), "honeybee node");
    });
}
