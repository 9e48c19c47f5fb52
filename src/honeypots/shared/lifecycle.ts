/**
 * The runtime contract every built-in honeypot keeps with the node agent: config from
 * HONEYBEE_CONFIG / HONEYBEE_* (exit 2 on a bad value, naming the key), one ready line on stdout
 * with the ports really bound, diagnostics as JSON on stderr, and on SIGTERM or SIGINT, or when
 * the node agent is gone (end of the stdin pipe it gives every honeypot): stop listening, close
 * sessions, flush events (bounded), exit 0.
 */
import { join } from "node:path";
import pino, { type Logger } from "pino";
import { toU64 } from "../../protocol/json.ts";
import { ConfigError, loadConfig, type ManifestOf, parsePort, type PotConfig } from "./config.ts";
import { EventSink } from "./sink.ts";
import { watchParent } from "../../signals.ts";

/** K: the keys of the pot's manifest, which its start function may read as plain strings. */
export interface PotContext<K extends string = never> {
  config: PotConfig<K>;
  sink: EventSink;
  logger: Logger;
}

export interface PotHandle {
  /** Ports really bound, by listener name ("ssh", "telnet", "http"). */
  ports: Record<string, number>;
  stop(): Promise<void>;
}

const STOP_LIMIT_MS = 5000;
const FLUSH_LIMIT_MS = 3000;

function eventSink(kind: string, config: PotConfig, logger: Logger): EventSink {
  return new EventSink({
    file: join(config.log_path || "log", `${kind}.json`),
    relay: config.event_port ? { host: config.event_host || "127.0.0.1", port: parsePort("event_port", config.event_port) } : null,
    identity: { node_id: toU64(config.node_id), pot_id: config.pot_id, pot_type: config.pot_type },
    logger,
  });
}

export async function runPot<K extends string>(manifest: ManifestOf<K>, start: (ctx: PotContext<K>) => Promise<PotHandle>): Promise<void> {
  // stdout carries only the ready line, so the log goes to stderr, where the node keeps the last lines.
  const logger = pino({ name: manifest.name }, pino.destination({ dest: 2, sync: true }));
  let config: PotConfig<K>;
  try {
    config = loadConfig(manifest);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`${manifest.name}: ${err.message}\n`);
    process.exit(2);
  }
  logger.setBindings({ pot_id: config.pot_id });
  const sink = eventSink(manifest.name, config, logger);

  // Attackers choose every byte these processes parse: an unforeseen throw in one connection's
  // handler must cost that connection, not the honeypot and every other session.
  process.on("uncaughtException", (err) => logger.error({ err }, "uncaught exception"));
  process.on("unhandledRejection", (err) => logger.error({ err }, "unhandled rejection"));

  let handle: PotHandle;
  try {
    handle = await start({ config, sink, logger });
  } catch (err) {
    logger.error({ err }, `cannot start: ${(err as Error).message}`);
    await sink.close(0);
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ ready: true, ports: handle.ports })}\n`);
  logger.info({ ports: handle.ports }, "ready");

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "stopping");
    await Promise.race([handle.stop(), Bun.sleep(STOP_LIMIT_MS)]);
    await sink.close(FLUSH_LIMIT_MS);
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  // A node agent that died (SIGKILL) cannot stop its honeypots; they notice and stop themselves.
  watchParent(() => void shutdown("node agent exited"));
}
