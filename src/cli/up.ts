/**
 * `honeybee up`: Core and a local node agent in one command, for a first try on one machine.
 * Core runs in this process; the node runs as its own process (`honeybee node`), exactly as it
 * would on a sensor host, so what works here works there. Ctrl-C, SIGTERM or a closed terminal
 * (SIGHUP) stops the node first (its honeypots send their last events and it says goodbye),
 * then Core. Nothing outlives `up`: killed outright, it leaves the node a closed stdin pipe,
 * and the node stops itself and its honeypots (src/signals.ts).
 *
 * Core's flags are `honeybee core`'s, and the node's are `honeybee node`'s (those `up` does not
 * set itself), from one definition (config-options.ts). The local node is given what Core's
 * configuration asks of nodes: the enrollment token, and Core's certificate to verify it by.
 */
import type { Option, Command } from "commander";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ConfigError, CoreConfig, flagsToConfig, loadCoreConfig, readConfigFile } from "../config";
import { startCore, type CoreHandle } from "../core";
import { isPostgresUrl, redactUrl } from "../db/pg";
import { createLogger, type LogLevel } from "../log";
import { NodeConfig } from "../node/config";
import { processAlive } from "../node/identity";
import { PARENT_PIPE_ENV, stopOnSignals } from "../signals";
import { oneLineErrors } from "./command";
import { attributeOf, configOptions, CORE_FLAG_KEYS, flagOf, NODE_FLAG_KEYS } from "./config-options";
import { CliError } from "./errors";

const MAIN = join(import.meta.dir, "..", "main.ts");
const REGISTER_TIMEOUT_MS = 60_000;

/** Node keys that `up` sets itself (from its own flags or from Core's configuration). */
const SET_BY_UP = new Set(["core", "events", "name", "data", "log_level", "tls_ca", "tls_cert", "tls_key", "enrollment_token"]);
const UP_NODE_KEYS = NODE_FLAG_KEYS.filter((k) => !SET_BY_UP.has(k));
/** How long a new `up` waits for the node agent of a killed one to finish stopping. */
const EARLIER_NODE_WAIT_MS = 30_000;

type UpOptions = { data: string; name: string; nodeConfig?: string } & Record<string, string | boolean | undefined>;

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
    ["Console", `${api}/   (the web console, in a browser)`],
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
  const up = program
    .command("up")
    .description("run Core and a local node agent together: a first try on one machine")
    .option("--data <dir>", "data directory: Core's database and the node's files", "./data")
    .option("--name <name>", "name of the local node", "local")
    .option("--config <file>", "Core's JSON config file, as for core (also HONEYBEE_CONFIG)")
    .option("--node-config <file>", "the local node's JSON config file, as for node");
  for (const option of upCoreOptions()) up.addOption(option);
  for (const option of configOptions(NodeConfig, UP_NODE_KEYS)) up.addOption(option);
  oneLineErrors(up).action(async (opts: UpOptions) => {
    const pick = (keys: readonly string[]) => flagsToConfig(Object.fromEntries(keys.map((k) => [attributeOf(k), opts[attributeOf(k)]])));
    const config = loadCoreConfig({ config: opts.config, ...pick(CORE_FLAG_KEYS) }, process.env, { db: join(opts.data, "honeybee.db"), log_level: "warn" });
    const nodeFile = opts.nodeConfig ? readConfigFile(opts.nodeConfig) : {};
    const nodeEnv = localNodeEnv(config, nodeFile);
    const nodeData = join(opts.data, "node");
    const core = await startCore(config, createLogger(config.log_level as LogLevel));
    await waitForEarlierNode(nodeData);
    const h = localAddress(config.host);

    const registered = Promise.withResolvers<bigint>();
    const unsubscribe = core.bus.subscribe((m) => {
      if (m.kind !== "NodeRegistration") return;
      const p = m.payload as { node_name?: string; node_id?: bigint };
      if (p.node_name === opts.name && p.node_id !== undefined) registered.resolve(p.node_id);
    });
    const nodeFlags = Object.entries(pick(UP_NODE_KEYS)).flatMap(([k, v]) => (Array.isArray(v) ? v.flatMap((item) => [flagOf(k), String(item)]) : [flagOf(k), String(v)]));
    const child = Bun.spawn(
      [
        process.execPath,
        MAIN,
        "node",
        ...["--core", `${h}:${core.ports.node}`, "--events", `${h}:${core.ports.event}`, "--name", opts.name, "--data", nodeData, "--log-level", config.log_level],
        ...(opts.nodeConfig ? ["--config", opts.nodeConfig] : []),
        ...nodeFlags,
      ],
      // The stdin pipe is never written: its end tells the node that `up` is gone, however it went.
      { stdin: "pipe", stdout: "inherit", stderr: "inherit", env: nodeEnv },
    );
    let stopped: Promise<void> | null = null;
    const stopAll = () =>
      (stopped ??= (async () => {
        child.kill("SIGTERM");
        await child.exited;
        await core.stop();
      })());
    // From now on, not once the summary is out: a signal during start-up stops both as well.
    stopOnSignals(stopAll, "honeybee up");

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
        summary({ host: config.host, ports: core.ports, node: { name: opts.name, id: nodeId, data: show(nodeData), relayPort: opts.relayPort as string | undefined }, db: isPostgresUrl(config.db) ? redactUrl(config.db) : show(config.db), cli }) + "\n",
      );
    } catch (e) {
      const signalled = stopped !== null;
      await stopAll();
      // Stopped by a signal: its handler exits once everything has stopped.
      if (signalled) return;
      if (!(e instanceof CliError)) throw e;
      process.stderr.write(`honeybee: ${e.message}\n`);
      process.exit(e.exitCode);
    } finally {
      clearTimeout(timer);
      unsubscribe();
    }

    // The pair stands or falls together: a Core whose only node died would look up but do nothing.
    void child.exited.then(async (code) => {
      if (stopped) return;
      process.stderr.write(`honeybee: the node agent exited with code ${code}; stopping Core\n`);
      await core.stop();
      process.exit(1);
    });
  });
}

function upCoreOptions(): Option[] {
  return configOptions(CoreConfig, CORE_FLAG_KEYS, { db: "DATA/honeybee.db", log_level: "warn, so that the summary stays readable; info logs every event" });
}

/**
 * The local node's environment: this one without Core's settings (HONEYBEE_TLS_CERT is Core's
 * certificate, not the node's), plus what Core's configuration asks of a node.
 */
export function localNodeEnv(config: CoreConfig, nodeFile: Record<string, unknown>, env: Record<string, string | undefined> = process.env): Record<string, string> {
  const coreVars = new Set([...Object.keys(CoreConfig.properties), "config"].map((k) => `HONEYBEE_${k.toUpperCase()}`));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !coreVars.has(k)) out[k] = v;
  out[PARENT_PIPE_ENV] = "1";
  if (config.node_enrollment_token && !nodeFile.enrollment_token) out.HONEYBEE_ENROLLMENT_TOKEN = config.node_enrollment_token;
  if (config.tls_cert && !nodeFile.tls_ca) {
    // A self-signed certificate is its own CA; a CA-signed one needs the CA in --node-config.
    out.HONEYBEE_TLS_CA = config.tls_cert;
  }
  if (config.tls_ca && !(nodeFile.tls_cert && nodeFile.tls_key)) {
    throw new ConfigError("Core asks nodes for a client certificate (tls_ca): give the local node its tls_cert and tls_key in --node-config");
  }
  return out;
}

/**
 * A node agent of an earlier `up` that was killed stops by itself once it notices, which may
 * take its honeypots' grace time; the new node would find the data directory locked. Wait for
 * it (it is not our child, so there is no exit event to await: look every few milliseconds).
 * Called once Core listens: a second `up` still running on the same ports has failed by then.
 */
async function waitForEarlierNode(nodeData: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(readFileSync(join(nodeData, "node.lock"), "utf8").trim().split(/\s+/)[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) return;
  // Only a node started by a parent it watches (an `up`) stops by itself; one run by hand does not.
  let environ = "";
  try {
    environ = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {}
  if (!environ.split("\0").includes(`${PARENT_PIPE_ENV}=1`)) return;
  process.stderr.write(`honeybee: waiting for the node agent of an earlier run (pid ${pid}) to stop\n`);
  const deadline = Date.now() + EARLIER_NODE_WAIT_MS;
  while (processAlive(pid) && Date.now() < deadline) await Bun.sleep(50);
  // Still there: the node's own lock check then names it, with what to do.
}
