/**
 * `honeybee up`: Core and a local node agent in one command, for a first try on one machine.
 * Core runs in this process; the node runs as its own process (`honeybee node`), exactly as it
 * would on a sensor host, so what works here works there. Ctrl-C stops the node first (its
 * honeypots send their last events and it says goodbye), then Core.
 */
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";
import { loadCoreConfig } from "../config";
import { startCore, type CoreHandle } from "../core";
import { createLogger, type LogLevel } from "../log";
import { stopOnSignals } from "../signals";
import { oneLineErrors } from "./command";
import { CliError } from "./errors";

const MAIN = join(import.meta.dir, "..", "main.ts");
const REGISTER_TIMEOUT_MS = 60_000;

interface UpOptions {
  data: string;
  name: string;
  host?: string;
  nodePort?: string;
  apiPort?: string;
  wsPort?: string;
  eventPort?: string;
  relayPort?: string;
  catalogue?: string;
  logLevel?: string;
}

/** Where clients on this machine reach a listener bound to `host`. */
export function localAddress(host: string): string {
  if (host === "0.0.0.0" || host === "::" || host === "[::]") return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export interface Summary {
  host: string;
  ports: CoreHandle["ports"];
  node: { name: string; id: bigint; data: string; relayPort?: string };
  db: string;
  /** How the operator runs the CLI: `bin/honeybee` in a checkout, else `honeybee`. */
  cli: string;
}

/** The lines `up` prints once everything listens: where each thing is, and what to type next. */
export function summary(s: Summary): string {
  const h = localAddress(s.host);
  const api = `http://${h}:${s.ports.api}`;
  const rows: [string, string][] = [
    ["REST API", `${api}   (GET /health, /api/v1/...)`],
    ["Swagger UI", `${api}/swagger`],
    ["WebSocket", `ws://${h}:${s.ports.ws}   (live feed and commands)`],
    ["Node channel", `${h}:${s.ports.node}   (nodes connect here)`],
    ["Event socket", `${h}:${s.ports.event}`],
    ["Node", `${s.node.name}, id ${s.node.id}, data in ${s.node.data}${s.node.relayPort && s.node.relayPort !== "0" ? `, event relay ${h}:${s.node.relayPort}` : ""}`],
    ["Database", s.db],
  ];
  const env = s.ports.api === 9002 && s.ports.ws === 9003 && h === "127.0.0.1" ? "" : `HONEYBEE_API=${api} HONEYBEE_WS=ws://${h}:${s.ports.ws} `;
  return [
    `HoneyBee is up: Core and the node "${s.node.name}" run on this machine.`,
    "",
    ...rows.map(([k, v]) => `  ${k.padEnd(13)} ${v}`),
    "",
    "Next, in another terminal, install an SSH honeypot on the node:",
    `  ${env}${s.cli} install ${s.node.name} cowrie --pot-id ssh-01 --start`,
    "",
    "Ctrl-C stops the node, its honeypots and Core.",
  ].join("\n");
}

export function registerUpCommand(program: Command): void {
  oneLineErrors(
    program
      .command("up")
      .description("run Core and a local node agent together: a first try on one machine")
      .option("--data <dir>", "data directory: Core's database and the node's files", "./data")
      .option("--name <name>", "name of the local node", "local")
      .option("--host <address>", "address Core listens on (default 127.0.0.1)")
      .option("--node-port <port>", "node control channel (default 9001)")
      .option("--api-port <port>", "REST API and Swagger UI (default 9002)")
      .option("--ws-port <port>", "WebSocket proxy (default 9003)")
      .option("--event-port <port>", "event socket (default 9100)")
      .option("--relay-port <port>", "the node's local event relay (default 9101)")
      .option("--catalogue <path|git-url>", "the node's honeypot catalogue (default: the built-in one)")
      .option("--log-level <level>", "log level of Core and the node (default warn, so that the summary stays readable; info logs every event)"),
  ).action(async (opts: UpOptions) => {
    const logLevel = opts.logLevel ?? process.env.HONEYBEE_LOG_LEVEL ?? "warn";
    const config = loadCoreConfig({
      host: opts.host,
      node_port: opts.nodePort,
      api_port: opts.apiPort,
      ws_port: opts.wsPort,
      event_port: opts.eventPort,
      db: join(opts.data, "honeybee.db"),
      log_level: logLevel,
    });
    const core = await startCore(config, createLogger(config.log_level as LogLevel));
    const h = localAddress(config.host);
    const nodeData = join(opts.data, "node");

    const registered = Promise.withResolvers<bigint>();
    const unsubscribe = core.bus.subscribe((m) => {
      const p = m.payload as { node_name?: string; node_id?: bigint };
      if (m.kind === "NodeRegistration" && p.node_name === opts.name && p.node_id !== undefined) registered.resolve(p.node_id);
    });
    const child = Bun.spawn(
      [
        process.execPath,
        MAIN,
        "node",
        ...["--core", `${h}:${core.ports.node}`, "--events", `${h}:${core.ports.event}`, "--name", opts.name, "--data", nodeData, "--log-level", config.log_level],
        ...(opts.relayPort ? ["--relay-port", opts.relayPort] : []),
        ...(opts.catalogue ? ["--catalogue", opts.catalogue] : []),
      ],
      { stdin: "ignore", stdout: "inherit", stderr: "inherit" },
    );
    let stopping = false;
    const stopAll = async () => {
      stopping = true;
      child.kill("SIGTERM");
      await child.exited;
      await core.stop();
    };

    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const nodeId = await Promise.race([
        registered.promise,
        child.exited.then((code) => {
          throw new CliError(`the node agent exited with code ${code} before it registered with Core; see its messages above`);
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new CliError(`the node agent did not register with Core within ${REGISTER_TIMEOUT_MS / 1000} s; see its messages above`)), REGISTER_TIMEOUT_MS);
        }),
      ]);
      const cli = existsSync(join("bin", "honeybee")) ? "bin/honeybee" : "honeybee";
      const show = (p: string) => relative(process.cwd(), p) || ".";
      process.stdout.write(
        summary({ host: config.host, ports: core.ports, node: { name: opts.name, id: nodeId, data: show(nodeData), relayPort: opts.relayPort }, db: show(config.db), cli }) + "\n",
      );
    } catch (e) {
      await stopAll();
      if (!(e instanceof CliError)) throw e;
      process.stderr.write(`honeybee: ${e.message}\n`);
      process.exit(e.exitCode);
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }

    // The pair stands or falls together: a Core whose only node died would look up but do nothing.
    void child.exited.then(async (code) => {
      if (stopping) return;
      process.stderr.write(`honeybee: the node agent exited with code ${code}; stopping Core\n`);
      await core.stop();
      process.exit(1);
    });
    stopOnSignals(stopAll, "honeybee up");
  });
}
