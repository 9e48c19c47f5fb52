/**
 * Checks an InstallPot against the catalogue before it reaches a node: an unknown kind or a bad
 * config would otherwise be refused only by the node, after it had reported the pot `Failed`,
 * which leaves it in the registry. Core holds the built-in catalogue; it checks only nodes whose
 * default catalogue is the same (NodeRegistration `catalogue`), with the node's own function,
 * so that Core never refuses what the node would install.
 */
import { catalogueDigest, loadCatalogue } from "../../catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../catalogue/paths";
import { checkInstall } from "../../catalogue/pot-config";
import type { InstallPot } from "../../protocol/messages";

export type InstallRefusal = { code: "unknown_kind" | "invalid_config"; message: string };

/**
 * `nodeCatalogue`: the fingerprint the node registered with, or null. An install from a
 * git_url, or with a git_branch, uses another catalogue than the node's default: not checked.
 */
export type InstallCheck = (nodeId: bigint, nodeCatalogue: string | null, req: InstallPot) => InstallRefusal | null;

export function catalogueInstallCheck(root = BUILTIN_CATALOGUE): InstallCheck {
  return (nodeId, nodeCatalogue, req) => {
    if (nodeCatalogue === null || req.git_url || req.git_branch) return null;
    // Read at each install (two small files): an operator may add a kind without a restart, as GET /api/v1/catalogue reads it.
    let catalogue: ReturnType<typeof loadCatalogue>;
    try {
      catalogue = loadCatalogue(root);
    } catch {
      return null;
    }
    if (catalogueDigest(catalogue) !== nodeCatalogue) return null;
    const r = checkInstall(catalogue, req, nodeId);
    return r.ok ? null : { code: r.code, message: `${r.message} (checked against node ${nodeId}'s catalogue; nothing was sent to the node)` };
  };
}
