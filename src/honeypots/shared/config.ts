/**
 * Configuration of a honeypot process, as the node agent hands it over.
 *
 * Every value is a string (InstallPot's `config` is an object of strings). Per key, the file
 * named by HONEYBEE_CONFIG wins, then the HONEYBEE_<KEY> environment variable, then the
 * manifest's default, so a pot started by hand with a few variables behaves like an installed one.
 */
import { readFileSync } from "node:fs";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { ConfigKey, Manifest } from "../../catalogue/manifest.ts";
import { parseWithIds, toU64 } from "../../protocol/json.ts";

/** Keys the node adds to every pot's config, beside the manifest's own. */
export const INTEGRATION_KEYS = ["event_host", "event_port", "node_id", "pot_id", "pot_type"] as const;

export type IntegrationKey = (typeof INTEGRATION_KEYS)[number];

/**
 * A loaded config: every key of the manifest (K) and every integration key is present, so a pot
 * that names its manifest's keys reads them as plain strings; any other key may be missing.
 */
export type PotConfig<K extends string = never> = Record<string, string> & Record<K | IntegrationKey, string>;

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

/** The part of a manifest loadConfig reads, keeping the literal key names of an imported manifest.json. */
export type ManifestOf<K extends string> = Pick<Manifest, "name"> & { config: Record<K, ConfigKey> };

function readConfigFile(path: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    // node_id may exceed 2^53: parseWithIds keeps its digits exact.
    parsed = parseWithIds(readFileSync(path, "utf8"));
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`config file ${path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function asString(key: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  throw new ConfigError(`config key ${key} must be a string`);
}

/** "0" is accepted so tests can ask for any free port and read the real one from the ready line. */
export function parsePort(key: string, value: string): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(`config key ${key} must be a port 0-65535, got "${value}"`);
  return port;
}

export function parsePositiveInt(key: string, value: string): number {
  const n = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (!(n > 0)) throw new ConfigError(`config key ${key} must be a positive integer, got "${value}"`);
  return n;
}

/** A size in bytes (up to 15 digits: more than any disk). */
export function parseByteCount(key: string, value: string): number {
  const n = /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (!(n > 0)) throw new ConfigError(`config key ${key} must be a positive number of bytes, got "${value}"`);
  return n;
}

function validate<K extends string>(manifest: ManifestOf<K>, config: PotConfig<K>): void {
  for (const key of Object.keys(manifest.config) as K[]) {
    const spec = manifest.config[key];
    const value = config[key];
    if (spec.port) parsePort(key, value);
    if (spec.schema && !Value.Check(Type.String(spec.schema), value)) {
      throw new ConfigError(`config key ${key} does not match ${JSON.stringify(spec.schema)}: "${value}"`);
    }
  }
  if (config.event_port !== "" && parsePort("event_port", config.event_port) === 0) {
    throw new ConfigError("config key event_port must be 1-65535");
  }
  if (config.node_id !== "" && toU64(config.node_id) === null) {
    throw new ConfigError(`config key node_id must be an unsigned 64-bit integer, got "${config.node_id}"`);
  }
}

/** Returns every manifest key plus the integration keys (empty string when not given). */
export function loadConfig<K extends string>(manifest: ManifestOf<K>, env: Env = process.env): PotConfig<K> {
  const file = env.HONEYBEE_CONFIG ? readConfigFile(env.HONEYBEE_CONFIG) : {};
  const keys = [...Object.keys(manifest.config), ...INTEGRATION_KEYS];
  const values: Record<string, string> = {};
  for (const key of keys) {
    const fromFile = file[key];
    const fromEnv = env[`HONEYBEE_${key.toUpperCase()}`];
    if (fromFile !== undefined && fromFile !== null) values[key] = asString(key, fromFile);
    else if (fromEnv !== undefined) values[key] = fromEnv;
    else values[key] = (manifest.config as Record<string, ConfigKey | undefined>)[key]?.default ?? "";
  }
  // The loop has set every manifest and integration key, which is what PotConfig<K> promises.
  const config = values as PotConfig<K>;
  if (config.pot_type === "") config.pot_type = manifest.name;
  if (config.pot_id === "") config.pot_id = manifest.name;
  validate(manifest, config);
  return config;
}
