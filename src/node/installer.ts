/**
 * Planning an InstallPot: every check that needs no side effect, in the order an operator
 * would want them reported. The effects (copy, install steps, config file) are in
 * install-run.ts; the ordering of both, with status reports, is in pot-commands.ts.
 */
import type { Catalogue, CatalogueKind } from "../catalogue/loader";
import { kindOf, type Checked } from "../catalogue/pot-config";
import type { InstallPot } from "../protocol/messages";
import { POT_ID_PATTERN } from "../protocol/types";
import type { PotRecord } from "./pot-store";
import { potRuntime, type NodeContext, type PotRuntime } from "./pot-runtime";

const POT_ID = new RegExp(POT_ID_PATTERN);

export interface InstallPlan {
  kind: CatalogueKind;
  runtime: PotRuntime;
  /** InstallPot's config as sent: stored, and merged with the manifest at every start. */
  config: Record<string, string>;
  autoStart: boolean;
}

/** A pot id names a folder: no separators, no `..`, no leading dot. */
export function checkPotId(potId: string): string | null {
  if (POT_ID.test(potId)) return null;
  return `invalid pot_id ${JSON.stringify(potId)}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit (it names a folder on the node)`;
}

/** Checks before anything is fetched. */
export function preflight(req: InstallPot, installed: (potId: string) => PotRecord | null): string | null {
  const bad = checkPotId(req.pot_id);
  if (bad) return bad;
  const existing = installed(req.pot_id);
  if (existing) return `pot_id ${req.pot_id} is already installed on this node (kind ${existing.pot_type}); choose another pot_id`;
  return null;
}

/** A port some other pot of this node is configured to use. */
export interface TakenPort {
  potId: string;
  key: string;
  port: number;
}

export function planInstall(req: InstallPot, catalogue: Catalogue, ctx: NodeContext, taken: TakenPort[]): Checked<InstallPlan> {
  const found = kindOf(catalogue, req.honeypot_type);
  if (!found.ok) return found;
  const kind = found.value;
  const config = req.config ?? {};
  const runtime = potRuntime(kind.manifest, req.pot_id, config, ctx);
  if (!runtime.ok) return runtime;
  for (const { key, port } of runtime.value.ports) {
    const other = taken.find((t) => t.port === port);
    if (other) return { ok: false, message: `port ${port} (${key}) is already configured for pot ${other.potId} (${other.key}) on this node` };
    if (port === ctx.eventPort) return { ok: false, message: `port ${port} (${key}) is the node's event relay port` };
  }
  return { ok: true, value: { kind, runtime: runtime.value, config, autoStart: req.auto_start === true } };
}
