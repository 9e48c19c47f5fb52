/**
 * A pot's configuration, from manifest defaults, the InstallPot `config` and the node's
 * integration settings. Pure: the node validates with it before installing, and Core's command
 * router rejects a bad InstallPot with the same messages before it reaches a node
 * (`checkInstall`).
 */
import { posix } from "node:path";
import { describeKinds, findKind, isPortString, type Catalogue, type CatalogueKind } from "./loader";
import type { ConfigKey, Manifest } from "./manifest";

/** Settings the node owns; every pot gets them in its config file and environment. */
export interface Integration {
  event_host: string;
  event_port: number;
  node_id: bigint;
  pot_id: string;
  pot_type: string;
}
export const INTEGRATION_KEYS = ["event_host", "event_port", "node_id", "pot_id", "pot_type"] as const;

export type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

/** The kind an InstallPot names, by name or alias, or why the catalogue has none. */
export function kindOf(catalogue: Catalogue, name: string): Checked<CatalogueKind> {
  const kind = findKind(catalogue, name);
  return kind ? { ok: true, value: kind } : { ok: false, message: `unknown honeypot kind ${JSON.stringify(name)}; known kinds: ${describeKinds(catalogue)}` };
}

/**
 * What a node refuses of an InstallPot from its catalogue alone, before it installs anything:
 * an unknown kind, an unknown config key, a bad value. Core runs it where it holds the node's
 * catalogue; what only the node knows (its relay's address, its other pots' ports, whether a
 * port is free) stays the node's to check.
 */
export function checkInstall(
  catalogue: Catalogue,
  req: { pot_id: string; honeypot_type: string; config?: Record<string, string> },
  nodeId: bigint,
): { ok: true } | { ok: false; code: "unknown_kind" | "invalid_config"; message: string } {
  const kind = kindOf(catalogue, req.honeypot_type);
  if (!kind.ok) return { ok: false, code: "unknown_kind", message: kind.message };
  const config = resolvePotConfig(kind.value.manifest, req.config ?? {}, { node_id: nodeId, pot_id: req.pot_id, pot_type: kind.value.manifest.name });
  return config.ok ? { ok: true } : { ok: false, code: "invalid_config", message: config.message };
}

/**
 * Merges defaults < `given` and checks every key and value. Integration keys may appear in
 * `given` (HonnyPotter's docs send `pot_id`) but only with the value the node will set anyway:
 * a different one would silently be overridden, which hides a mistake. Core, which does not
 * know the node's relay address, leaves those values out; they are not checked then.
 */
export function resolvePotConfig(manifest: Manifest, given: Record<string, string>, integration: Integration | Omit<Integration, "event_host" | "event_port">): Checked<Record<string, string>> {
  const merged: Record<string, string> = {};
  for (const [key, spec] of Object.entries(manifest.config)) merged[key] = spec.default;
  const fixed = knownIntegration(integration);
  for (const [key, value] of Object.entries(given)) {
    if (typeof value !== "string") return { ok: false, message: `config value of ${key} must be a string (send numbers as strings, e.g. "2222")` };
    if ((INTEGRATION_KEYS as readonly string[]).includes(key)) {
      if (fixed[key] !== undefined && value !== fixed[key]) return { ok: false, message: `config key ${key} is set by the node to ${JSON.stringify(fixed[key])}; leave it out or send that value` };
      continue;
    }
    if (!(key in manifest.config)) {
      const known = Object.keys(manifest.config);
      return { ok: false, message: `unknown config key ${key} for kind ${manifest.name} (known keys: ${known.length ? known.join(", ") : "none"})` };
    }
    merged[key] = value;
  }
  for (const [key, spec] of Object.entries(manifest.config)) {
    if ((INTEGRATION_KEYS as readonly string[]).includes(key)) continue;
    const problem = checkValue(key, spec, merged[key]!);
    if (problem) return { ok: false, message: problem };
  }
  const seen = new Map<string, string>();
  for (const { key, port } of potPorts(manifest, merged)) {
    const other = seen.get(String(port));
    if (other) return { ok: false, message: `config keys ${other} and ${key} both use port ${port}` };
    seen.set(String(port), key);
  }
  return { ok: true, value: merged };
}

function checkValue(key: string, spec: ConfigKey, value: string): string | null {
  if (spec.port && !isPortString(value)) return `config key ${key} is a port: ${JSON.stringify(value)} is not a number from 1 to 65535`;
  if (spec.path && !insidePotDir(value)) return `config key ${key}: ${JSON.stringify(value)} leaves the pot's folder; give a relative path inside it, without ".." (e.g. "log")`;
  const s = spec.schema;
  if (!s) return null;
  const bad = (why: string) => `config key ${key}: ${JSON.stringify(value)} ${why}`;
  if (Array.isArray(s.enum) && !s.enum.includes(value)) return bad(`is not one of ${s.enum.join(", ")}`);
  if (typeof s.pattern === "string" && !new RegExp(s.pattern, "u").test(value)) return bad(`does not match ${s.pattern}`);
  if (typeof s.minLength === "number" && value.length < s.minLength) return bad(`is shorter than ${s.minLength} characters`);
  if (typeof s.maxLength === "number" && value.length > s.maxLength) return bad(`is longer than ${s.maxLength} characters`);
  if (typeof s.minimum === "number" || typeof s.maximum === "number") {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n)) return bad("is not a number");
    if (typeof s.minimum === "number" && n < s.minimum) return bad(`is below ${s.minimum}`);
    if (typeof s.maximum === "number" && n > s.maximum) return bad(`is above ${s.maximum}`);
  }
  return null;
}

/**
 * Whether a path, taken relative to the pot's folder, stays inside it. A pot's files are its
 * own: a config value must not make it write (or read) elsewhere on the node.
 */
export function insidePotDir(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (value.trim() === "" || /[\x00-\x1f\x7f\\]/.test(value) || posix.isAbsolute(value)) return false;
  const normal = posix.normalize(value);
  return normal !== ".." && !normal.startsWith("../");
}

/** The port keys of a pot with their numbers. */
export function potPorts(manifest: Manifest, config: Record<string, string>): { key: string; port: number }[] {
  return Object.entries(manifest.config)
    .filter(([key, spec]) => spec.port && isPortString(config[key] ?? ""))
    .map(([key]) => ({ key, port: Number(config[key]) }));
}

function integrationValues(i: Integration): Record<string, string> {
  return { event_host: i.event_host, event_port: String(i.event_port), node_id: i.node_id.toString(), pot_id: i.pot_id, pot_type: i.pot_type };
}

/** The integration values known: all of them on the node, all but the relay's on Core. */
function knownIntegration(i: Integration | Omit<Integration, "event_host" | "event_port">): Partial<Record<string, string>> {
  return "event_host" in i ? integrationValues(i) : { node_id: i.node_id.toString(), pot_id: i.pot_id, pot_type: i.pot_type };
}

/** `config.json` of a pot: every key as a string, integration settings included. */
export function potConfigFile(config: Record<string, string>, integration: Integration): Record<string, string> {
  return { ...config, ...integrationValues(integration) };
}

/**
 * The pot's environment apart from PATH/HOME/LANG: each config key as HONEYBEE_<KEY>, the
 * integration settings, and HONEYBEE_CONFIG naming the config file.
 */
export function potEnv(config: Record<string, string>, integration: Integration, configPath: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(potConfigFile(config, integration))) env[`HONEYBEE_${key.toUpperCase()}`] = value;
  env.HONEYBEE_CONFIG = configPath;
  return env;
}

/** Values of the `${NAME}` placeholders that manifest commands may use. */
export interface ArgvVars {
  BUN: string;
  HONEYBEE_HOME: string;
  POT_DIR: string;
}

/** Replaces `${BUN}`, `${HONEYBEE_HOME}` and `${POT_DIR}` inside each argument; nothing else. */
export function expandArgv(argv: readonly string[], vars: ArgvVars): string[] {
  return argv.map((arg) => arg.replace(/\$\{(BUN|HONEYBEE_HOME|POT_DIR)\}/g, (_m, name: keyof ArgvVars) => vars[name]));
}
