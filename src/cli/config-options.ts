/**
 * Command-line flags made from the configuration schemas, so that `core`, `node` and `up` offer
 * the same flags with the same meaning from one definition: a key's flag is its name in
 * kebab case (`api_port` -> `--api-port`), its help is the schema's description and default.
 * Flags override the config file and the environment (src/config.ts); an absent flag leaves
 * them alone, so no flag carries a commander default.
 */
import { Option } from "commander";
import type { TObject, TSchema } from "@sinclair/typebox";
import { CoreConfig } from "../config";
import type { NodeConfig } from "../node/config";

/**
 * Core's keys that are flags; the rest are set in the config file or the environment (secrets
 * such as node_enrollment_token stay off the command line, where `ps` shows them).
 */
export const CORE_FLAG_KEYS = [
  "host",
  "node_port",
  "api_port",
  "ws_port",
  "event_port",
  "db",
  "bus",
  "cluster",
  "roles",
  "bus_replicas",
  "log_level",
  "log_events",
  "retention_days",
  "tokens_file",
  "tls_cert",
  "tls_key",
  "tls_ca",
  "insecure",
  "geoip_db",
  "asn_db",
] as const satisfies readonly (keyof CoreConfig)[];

export const NODE_FLAG_KEYS = [
  "core",
  "events",
  "name",
  "type",
  "data",
  "catalogue",
  "catalogue_branch",
  "relay_host",
  "relay_port",
  "heartbeat_ms",
  "reconnect_min_ms",
  "reconnect_max_ms",
  "start_timeout_ms",
  "stop_grace_ms",
  "restart_min_ms",
  "restart_max_ms",
  "install_timeout_ms",
  "spool_max_bytes",
  "pot_dir",
  "git_allow",
  "enrollment_token",
  "tls_ca",
  "tls_cert",
  "tls_key",
  "log_level",
] as const satisfies readonly (keyof NodeConfig)[];

export const flagOf = (key: string) => `--${key.replace(/_/g, "-")}`;

/** Commander's attribute name of a key's flag (`api_port` -> `apiPort`). */
export const attributeOf = (key: string) => key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

const VALUE_NAMES: Record<string, string> = { core: "host:port,...", events: "host:port,...", host: "address", relay_host: "address", catalogue: "path|git-url", git_allow: "prefixes", log_level: "level", type: "type", catalogue_branch: "branch", enrollment_token: "token", data: "dir", name: "name", pot_dir: "pot-id=dir" };

function valueName(key: string, s: TSchema): string {
  if (VALUE_NAMES[key]) return VALUE_NAMES[key];
  if (s.type === "boolean") return "bool";
  if (key.endsWith("_port")) return "port";
  if (key.endsWith("_ms")) return "ms";
  if (key.endsWith("_bytes")) return "bytes";
  if (key.endsWith("_days")) return "days";
  if (key === "db" || key.endsWith("_file") || key.startsWith("tls_")) return "file";
  return s.type === "integer" ? "n" : key.replace(/_/g, "-");
}

/**
 * The flags of `keys` of `schema`. `defaults` replaces the default shown in help where it is
 * not the schema's (a host name, `up`'s data directory).
 */
export function configOptions(schema: TObject, keys: readonly string[], defaults: Record<string, string> = {}): Option[] {
  return keys.map((key) => {
    const s = (schema.properties as Record<string, TSchema>)[key];
    if (!s) throw new Error(`no configuration key ${key}`);
    // Help reads like commander's own lines: lower case first (but not "PEM", "REST"), no full stop.
    const what = String(s.description ?? key)
      .replace(/\.$/, "")
      .replace(/^(?!Core\b)[A-Z](?=[a-z]+\b)/, (c) => c.toLowerCase());
    const def = defaults[key] ?? (s.default === "" || s.default === false || Array.isArray(s.default) ? null : String(s.default));
    // A switch that is off by default is a plain flag; one that is on takes a value to turn it off.
    if (s.type === "boolean" && s.default === false) return new Option(flagOf(key), what);
    // A list is the flag repeated, one item each.
    if (s.type === "array") return new Option(`${flagOf(key)} <${valueName(key, s)}>`, what).argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    const option = new Option(`${flagOf(key)} <${valueName(key, s)}>`, def === null ? what : `${what} (default ${def})`);
    const literals = (s.anyOf as TSchema[] | undefined)?.map((x) => x.const);
    return literals?.every((l) => typeof l === "string") ? option.choices(literals as string[]) : option;
  });
}

export const coreOptions = (defaults: Record<string, string> = {}) => configOptions(CoreConfig, CORE_FLAG_KEYS, defaults);
