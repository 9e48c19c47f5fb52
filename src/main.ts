#!/usr/bin/env bun
/**
 * The `honeybee` command: parses arguments and hands them to the program they name.
 */
import { Command, CommanderError, Option } from "commander";
import { ConfigError, CoreConfig, loadCoreConfig, resolveConfig } from "./config";
import { PortInUseError, bindOrExplain, startCore } from "./core";
import { startStandaloneProxy } from "./core/proxy/standalone";
import { createLogger } from "./log";
import { registerNodeCommand } from "./node/cli";
import { stopOnSignals } from "./signals";

const program = new Command("honeybee")
  .description("HoneyBee: honeypot management. Core, node agent, WebSocket proxy and management commands.")
  .showHelpAfterError()
  .exitOverride();

program
  .command("core", { isDefault: true })
  .description("run Core: registry, node channel (9001), REST API (9002), WebSocket proxy (9003), event socket (9100)")
  .option("--config <file>", "JSON config file (also HONEYBEE_CONFIG)")
  .option("--host <address>", "address every listener binds to (default 127.0.0.1)")
  .option("--node-port <port>", "node control channel port (default 9001)")
  .option("--api-port <port>", "REST API port (default 9002)")
  .option("--ws-port <port>", "WebSocket proxy port (default 9003)")
  .option("--event-port <port>", "event socket port (default 9100)")
  .option("--db <path>", "SQLite file (default ./data/honeybee.db)")
  .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (default info)")
  .addOption(new Option("--log-events <bool>", "one log line per event (default true)"))
  .option("--retention-days <days>", "delete events older than this (default 0: keep)")
  .action(async (opts: Record<string, string | undefined>) => {
    const flags: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(opts)) if (v !== undefined) flags[k.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())] = v;
    const config = loadCoreConfig(flags);
    const logger = createLogger(config.log_level);
    const core = await startCore(config, logger);
    stopOnSignals(() => core.stop());
  });

program
  .command("proxy")
  .description("run the WebSocket proxy as its own process, fed from Core's backend stream")
  .requiredOption("--backend <url>", "Core's REST address, e.g. ws://127.0.0.1:9002")
  .option("--host <address>", "address to bind (default 127.0.0.1)", "127.0.0.1")
  .option("--ws-port <port>", "WebSocket port (default 9003)", "9003")
  .option("--log-level <level>", "log level", process.env.HONEYBEE_LOG_LEVEL ?? "info")
  .action((opts: { backend: string; host: string; wsPort: string; logLevel: string }) => {
    const config = resolveConfig(CoreConfig, [{ host: opts.host, ws_port: opts.wsPort, log_level: opts.logLevel }]);
    const logger = createLogger(config.log_level);
    const proxy = bindOrExplain("ws_port", config.host, config.ws_port, () =>
      startStandaloneProxy({
        backend: opts.backend,
        host: config.host,
        port: config.ws_port,
        maxMessageBytes: config.max_message_bytes,
        backpressureBytes: config.ws_backpressure_bytes,
        logger,
      }),
    );
    logger.info({ host: config.host, port: proxy.port, backend: opts.backend }, "proxy started");
    stopOnSignals(async () => proxy.stop());
  });

registerNodeCommand(program);

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
