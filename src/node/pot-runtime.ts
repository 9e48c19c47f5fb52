/**
 * Everything a pot needs to run, computed from its manifest, its stored config and the node's
 * integration settings: argv, environment, config file, ports. Pure; computed again at every
 * start, so a node restarted with another relay port or data directory hands its pots the
 * current values rather than the ones from install time.
 */
import { join } from "node:path";
import type { Manifest } from "../catalogue/manifest";
import { expandArgv, potConfigFile, potEnv, potPorts, resolvePotConfig, type Checked } from "../catalogue/pot-config";

export interface NodeContext {
  nodeId: bigint;
  /** The relay, as the pots reach it. */
  eventHost: string;
  eventPort: number;
  potsDir: string;
  /** `${BUN}`: the Bun executable running the node. */
  bun: string;
  /** `${HONEYBEE_HOME}`: the package root. */
  home: string;
  /** PATH, HOME and LANG: all a pot inherits from the node's own environment. */
  baseEnv: Record<string, string>;
}

export interface PotRuntime {
  dir: string;
  argv: string[];
  /** Install steps with placeholders expanded. */
  steps: string[][];
  env: Record<string, string>;
  configPath: string;
  configFile: Record<string, string>;
  ports: { key: string; port: number }[];
}

export function potDir(ctx: NodeContext, potId: string): string {
  return join(ctx.potsDir, potId);
}

export function potRuntime(manifest: Manifest, potId: string, given: Record<string, string>, ctx: NodeContext): Checked<PotRuntime> {
  const integration = { event_host: ctx.eventHost, event_port: ctx.eventPort, node_id: ctx.nodeId, pot_id: potId, pot_type: manifest.name };
  const config = resolvePotConfig(manifest, given, integration);
  if (!config.ok) return config;
  const dir = potDir(ctx, potId);
  const configPath = join(dir, "config.json");
  const vars = { BUN: ctx.bun, HONEYBEE_HOME: ctx.home, POT_DIR: dir };
  return {
    ok: true,
    value: {
      dir,
      argv: expandArgv(manifest.entry, vars),
      steps: manifest.install.map((step) => expandArgv(step, vars)),
      env: { ...ctx.baseEnv, ...potEnv(config.value, integration, configPath) },
      configPath,
      configFile: potConfigFile(config.value, integration),
      ports: potPorts(manifest, config.value),
    },
  };
}

export function pickBaseEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "LANG"]) if (env[key]) out[key] = env[key]!;
  return out;
}
