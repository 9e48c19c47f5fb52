/**
 * Node agent configuration: defaults < config file (`--config`) < HONEYBEE_* environment <
 * command-line flags, validated once. Intervals are configurable so that tests run in
 * milliseconds what production spaces out over seconds.
 */
import { Type, type Static } from "@sinclair/typebox";
import { hostname } from "node:os";
import { resolve as resolvePath } from "node:path";
import { ConfigError, fromEnv, readConfigFile, resolveConfig } from "../config";
import { LOG_LEVELS } from "../log";
import { POT_ID_PATTERN } from "../protocol/types";

const Ms = (description: string, def: number, minimum = 1) => Type.Integer({ minimum, default: def, description });

export const NodeConfig = Type.Object({
  core: Type.String({
    minLength: 1,
    default: "127.0.0.1:9001",
    description: "Core's node control channel, HOST:PORT; several Core instances as a comma-separated list (a:9001,b:9001,[::1]:9001): the node uses the first that answers and fails over to the next when it loses it.",
  }),
  events: Type.String({ default: "", description: "Core's event socket, HOST:PORT; with several `core` addresses, a list of as many, in the same order (default: each Core's host, port 9100)." }),
  name: Type.String({ minLength: 1, maxLength: 256, default: hostname() || "node", description: "Node name shown by Core." }),
  type: Type.Union([Type.Literal("Full"), Type.Literal("Agent")], { default: "Full", description: "Node type reported to Core." }),
  data: Type.String({ minLength: 1, default: "./data/node", description: "Data directory: node id, installed pots, logs, event spool." }),
  catalogue: Type.String({ default: "", description: "Default honeypot catalogue: a directory, or a git URL / repository cloned with --depth 1 (default: the built-in catalogue)." }),
  catalogue_branch: Type.String({ default: "", description: "Branch of a git catalogue (default: the repository's default branch)." }),
  relay_host: Type.String({ minLength: 1, default: "127.0.0.1", description: "Address of the local event relay that honeypots send to." }),
  relay_port: Type.Integer({ minimum: 0, maximum: 65535, default: 9101, description: "Port of the local event relay (0: any free port)." }),
  log_level: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { default: "info", description: "pino log level." }),
  heartbeat_ms: Ms("Interval of NodeStatusUpdate heartbeats (Core marks a node Unknown after three missed).", 30_000, 10),
  reconnect_min_ms: Ms("First delay before reconnecting to Core; doubles per failure, with jitter.", 500),
  reconnect_max_ms: Ms("Longest delay between reconnect attempts.", 30_000),
  start_timeout_ms: Ms("How long a starting honeypot may take to print its ready line before it counts as running if alive.", 10_000),
  stop_grace_ms: Ms("Time between SIGTERM and SIGKILL when stopping a honeypot.", 10_000),
  restart_min_ms: Ms("First delay before restarting a honeypot that exited unexpectedly; doubles per crash.", 1_000),
  restart_max_ms: Ms("Longest delay between restarts of a crashing honeypot.", 60_000),
  install_timeout_ms: Ms("Time limit of one install step (and of a catalogue clone).", 600_000),
  spool_max_bytes: Type.Integer({ minimum: 1024, default: 256 * 1024 * 1024, description: "Disk bound of the event spool; beyond it the oldest events are dropped and counted." }),
  spool_segment_bytes: Type.Integer({ minimum: 256, default: 4 * 1024 * 1024, description: "Size of one spool file (the unit in which the oldest events are dropped)." }),
  forward_window: Type.Integer({ minimum: 1, default: 16_384, description: "Events sent to Core and not yet acknowledged, at most." }),
  max_message_bytes: Type.Integer({ minimum: 1024, default: 1024 * 1024, description: "Largest message or event line accepted." }),
  file_scan_ms: Ms("How often the node looks in its pots' outboxes for files to send to Core (artifacts; docs/artifacts.md).", 2_000, 10),
  file_rate_bytes: Type.Integer({ minimum: 0, default: 0, description: "Bytes per second at most for files sent to Core (0: no limit); keeps a thin sensor uplink free for events." }),
  pot_dir: Type.Array(Type.String(), {
    default: [],
    description:
      "Folder of a honeypot this node relays for but did not install (a Cowrie of your own that sends its HoneyBee output to the relay), as POT_ID=DIR: its working directory, where the paths of its recordings start (Cowrie's holds var/lib/cowrie/tty). Repeat for several pots. The node reads recordings from inside DIR only (docs/sessions.md#recordings-of-a-cowrie-of-your-own).",
  }),
  git_allow: Type.String({ default: "", description: "Comma-separated git URL prefixes InstallPot's git_url may name (default: none but the node's own catalogue). Compared after normalising both (scheme, user and host exact, `..` and escapes resolved) and at whole path segments; the normalised URL is what gets cloned." }),
  enrollment_token: Type.String({ default: "", description: "Core's node_enrollment_token, presented on the first registration only; Core then gives the node its TOTP secret." }),
  tls_ca: Type.String({ default: "", description: "PEM CA that signed Core's certificate: connect to Core over TLS and verify it." }),
  tls_cert: Type.String({ default: "", description: "PEM client certificate for mutual TLS with Core." }),
  tls_key: Type.String({ default: "", description: "PEM private key of tls_cert." }),
});
export type NodeConfig = Static<typeof NodeConfig>;

const KEYS = Object.keys(NodeConfig.properties);

const resolve = (layers: Record<string, unknown>[]): NodeConfig => resolveConfig(NodeConfig, layers);

/** Loads the node's configuration; `flags` uses the keys above (`config` names a file). */
export function loadNodeConfig(flags: Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env): NodeConfig {
  const { config: file, ...rest } = flags;
  const config = resolve([typeof file === "string" ? readConfigFile(file) : {}, fromEnv(KEYS, env), rest]);
  corePeers(config);
  potDirs(config);
  if (config.reconnect_max_ms < config.reconnect_min_ms) throw new ConfigError("reconnect_max_ms must not be below reconnect_min_ms");
  if (config.restart_max_ms < config.restart_min_ms) throw new ConfigError("restart_max_ms must not be below restart_min_ms");
  if (config.spool_segment_bytes > config.spool_max_bytes) throw new ConfigError("spool_segment_bytes must not exceed spool_max_bytes");
  return config;
}

/** Full config from a partial one, for tests and embedding. */
export const defaultNodeConfig = (overrides: Partial<NodeConfig> = {}): NodeConfig => loadNodeConfig(overrides, {});

/** Parses HOST:PORT (IPv6 as [::1]:9001); the error names the key. */
export function hostPort(value: string, key: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:\s]+)):(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) throw new ConfigError(`invalid value for "${key}": ${JSON.stringify(value)} (expected HOST:PORT, e.g. 127.0.0.1:9001)`);
  return { host: (m[1] ?? m[2])!, port };
}

export interface Address {
  host: string;
  port: number;
}

/** One Core instance as the node sees it: its control channel and its event socket. */
export interface CorePeer {
  control: Address;
  events: Address;
}

const LIST_HINT = "expected HOST:PORT or a comma-separated list of them, e.g. 10.0.0.1:9001,10.0.0.2:9001";

/** Parses a comma-separated HOST:PORT list; the error names the key and the bad item. */
export function hostPortList(value: string, key: string): Address[] {
  const items = value.split(",");
  // One address keeps the message it always had.
  if (items.length === 1) return [hostPort(value, key)];
  return items.map((item, i) => {
    const where = `item ${i + 1} of ${JSON.stringify(value)}`;
    if (item.trim() === "") throw new ConfigError(`invalid value for "${key}": ${where} is empty (${LIST_HINT})`);
    try {
      return hostPort(item, key);
    } catch {
      throw new ConfigError(`invalid value for "${key}": ${where}, ${JSON.stringify(item.trim())}, is not HOST:PORT (${LIST_HINT})`);
    }
  });
}

/**
 * The Core instances in the order the node tries them. Events go to the instance the node is
 * registered with, so each control address is paired with one event socket: `events` by
 * position, or the same host on 9100.
 */
export function corePeers(config: NodeConfig): CorePeer[] {
  const control = hostPortList(config.core, "core");
  if (!config.events) return control.map((c) => ({ control: c, events: { host: c.host, port: 9100 } }));
  const events = hostPortList(config.events, "events");
  if (events.length !== control.length) {
    throw new ConfigError(`invalid value for "events": ${events.length} address(es) for ${control.length} in "core" (give one event socket per Core, in the same order, or leave "events" unset for port 9100 on each Core's host)`);
  }
  return control.map((c, i) => ({ control: c, events: events[i]! }));
}

export const gitAllowList = (config: NodeConfig): string[] =>
  config.git_allow
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

const POT_ID = new RegExp(POT_ID_PATTERN);

/** The folders of the pots named by `pot_dir`, absolute, by pot id; the error names the bad item. */
export function potDirs(config: NodeConfig): Map<string, string> {
  const dirs = new Map<string, string>();
  for (const item of config.pot_dir) {
    const at = item.indexOf("=");
    const potId = at < 0 ? "" : item.slice(0, at).trim();
    const dir = at < 0 ? "" : item.slice(at + 1).trim();
    if (!POT_ID.test(potId) || dir === "") throw new ConfigError(`invalid value for "pot_dir": ${JSON.stringify(item)} (expected POT_ID=DIR, e.g. cowrie-lab=/opt/cowrie; a pot id is 1 to 64 letters, digits, ".", "_" or "-")`);
    if (dirs.has(potId)) throw new ConfigError(`invalid value for "pot_dir": pot ${potId} is named twice`);
    dirs.set(potId, resolvePath(dir));
  }
  return dirs;
}
