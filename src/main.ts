#!/usr/bin/env bun
/**
 * The `honeybee` command: parses arguments and hands them to the program they name.
 */
import "./runtime-env-first";
import { Command, CommanderError } from "commander";
import { ConfigError, CoreConfig, flagsToConfig, loadCoreConfig } from "./config";
import { Security, newToken, sha256 } from "./core/auth";
import { PortInUseError, bindOrExplain, startCore } from "./core";
import { startStandaloneProxy } from "./core/proxy/standalone";
import { createLogger } from "./log";
import { registerNodeCommand } from "./node/cli";
import { registerCliCommands } from "./cli";
import { configOptions, coreOptions } from "./cli/config-options";
import { stopOnSignals } from "./signals";
import pkg from "../package.json" with { type: "json" };

const program = new Command("honeybee")
  .description("HoneyBee: honeypot management. Core, node agent, WebSocket proxy and management commands.")
  .version(pkg.version, "-V, --version", "print the version of HoneyBee")
  .showHelpAfterError()
  .exitOverride();

const coreCommand = program
  .command("core")
  .description("run Core: registry, node channel (9001), REST API (9002), WebSocket proxy (9003), event socket (9100)")
  .option("--config <file>", "JSON config file (also HONEYBEE_CONFIG)");
for (const option of coreOptions()) coreCommand.addOption(option);
coreCommand.action(async (opts: Record<string, string | undefined>) => {
  const config = loadCoreConfig(flagsToConfig(opts));
  const logger = createLogger(config.log_level);
  const core = await startCore(config, logger);
  stopOnSignals(() => core.stop());
});

const proxyCommand = program
  .command("proxy")
  .description("run the WebSocket proxy as its own process, fed from Core's backend stream")
  .requiredOption("--backend <url>", "Core's REST address, e.g. ws://127.0.0.1:9002")
  .option("--config <file>", "JSON config file, as for core (host, ws_port, tokens, tls)")
  .option("--token <token>", "API token for Core's backend stream (also HONEYBEE_TOKEN)");
for (const option of configOptions(CoreConfig, ["host", "ws_port", "log_level"])) proxyCommand.addOption(option);
proxyCommand.action((opts: { backend: string; token?: string } & Record<string, string | undefined>) => {
  const { backend, token, ...rest } = opts;
  const config = loadCoreConfig(flagsToConfig(rest));
  const logger = createLogger(config.log_level);
  const security = new Security(config);
  const warning = security.checkExposure();
  if (warning) logger.warn(warning);
  const proxy = bindOrExplain("ws_port", config.host, config.ws_port, () =>
    startStandaloneProxy({
      backend,
      host: config.host,
      port: config.ws_port,
      maxMessageBytes: config.max_message_bytes,
      backpressureBytes: config.ws_backpressure_bytes,
      security,
      token: token ?? process.env.HONEYBEE_TOKEN,
      logger,
    }),
  );
  logger.info({ host: config.host, port: proxy.port, backend }, "proxy started");
  stopOnSignals(async () => proxy.stop());
});

program
  .command("token")
  .description("manage API tokens")
  .command("create")
  .description("make a new API token: prints the token once, and the entry to put in the config's tokens or tokens_file")
  .requiredOption("--name <name>", "who the token is for (shown in command records)")
  .option("--role <role>", "read or operator", "read")
  .action((opts: { name: string; role: string }) => {
    if (opts.role !== "read" && opts.role !== "operator") {
      console.error("honeybee: --role must be read or operator");
      process.exit(2);
    }
    const token = newToken();
    console.log(JSON.stringify({ token, entry: { name: opts.name, role: opts.role, sha256: sha256(token) } }, null, 2));
  });


registerNodeCommand(program);
registerCliCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
  if (e instanceof ConfigError || e instanceof PortInUseError) {
    console.error(`honeybee: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
