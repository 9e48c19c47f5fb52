/**
 * `honeybee node`: parses flags into the node configuration and runs the agent until
 * SIGINT/SIGTERM, when it stops its honeypots and says NodeDrop before exiting.
 */
import type { Command } from "commander";
import { flagsToConfig } from "../config";
import { createLogger } from "../log";
import { stopOnSignals } from "../signals";
import { startNode } from "./agent";
import { loadNodeConfig } from "./config";

export function registerNodeCommand(program: Command): void {
  program
    .command("node")
    .description("run a node agent: register with Core, install and supervise honeypots, relay their events")
    .option("--config <file>", "JSON config file with the keys below (snake_case)")
    .option("--core <host:port>", "Core's node control channel (default 127.0.0.1:9001)")
    .option("--events <host:port>", "Core's event socket (default: Core's host, port 9100)")
    .option("--name <name>", "node name shown by Core (default: host name)")
    .option("--type <type>", "Full or Agent (default Full)")
    .option("--data <dir>", "data directory: node id, pots, logs, event spool (default ./data/node)")
    .option("--catalogue <path|git-url>", "default honeypot catalogue (default: the built-in one)")
    .option("--catalogue-branch <branch>", "branch of a git catalogue")
    .option("--relay-host <address>", "address of the local event relay (default 127.0.0.1)")
    .option("--relay-port <port>", "port of the local event relay (default 9101)")
    .option("--heartbeat-ms <ms>", "heartbeat interval (default 30000)")
    .option("--reconnect-min-ms <ms>", "first reconnect delay (default 500)")
    .option("--reconnect-max-ms <ms>", "longest reconnect delay (default 30000)")
    .option("--start-timeout-ms <ms>", "wait for a honeypot's ready line (default 10000)")
    .option("--stop-grace-ms <ms>", "SIGTERM to SIGKILL grace (default 10000)")
    .option("--restart-min-ms <ms>", "first restart delay of a crashed honeypot (default 1000)")
    .option("--restart-max-ms <ms>", "longest restart delay (default 60000)")
    .option("--install-timeout-ms <ms>", "time limit of one install step or clone (default 600000)")
    .option("--spool-max-bytes <bytes>", "disk bound of the event spool (default 268435456)")
    .option("--git-allow <prefixes>", "comma-separated git URL prefixes InstallPot's git_url may name (default: none)")
    .option("--enrollment-token <token>", "Core's node enrollment token, for the first registration (also HONEYBEE_ENROLLMENT_TOKEN)")
    .option("--tls-ca <file>", "PEM CA of Core's certificate: connect over TLS and verify Core")
    .option("--tls-cert <file>", "PEM client certificate (mutual TLS)")
    .option("--tls-key <file>", "PEM key of --tls-cert")
    .option("--log-level <level>", "fatal|error|warn|info|debug|trace|silent (default info)")
    .action(async (opts: Record<string, string | undefined>) => {
      const config = loadNodeConfig(flagsToConfig(opts));
      const node = await startNode(config, createLogger(config.log_level));
      stopOnSignals(() => node.stop(), "honeybee node");
    });
}
