/**
 * The console's URLs (docs/console.md). Each page is a real URL that Core answers with the
 * console's index.html, so links and reloads work; the page itself and its scripts carry no
 * data, so they are served without a token (the API calls they make need one).
 */
export const CONSOLE_PAGES = ["/", "/live", "/events", "/sessions", "/artifacts", "/map", "/nodes", "/settings", "/signin"] as const;
/** Pages with a parameter: `/nodes/{node_id}`, `/attackers/{ip}`, `/sessions/{id}`, the dashboards `/kinds/{kind}` and `/pots/{pot_id}`, `/artifacts/{sha256}`. */
export const CONSOLE_PAGE_PREFIXES = ["/nodes/", "/attackers/", "/sessions/", "/kinds/", "/pots/", "/artifacts/"] as const;
export const CONSOLE_ASSETS = "/console/";

const PAGES = new Set<string>(CONSOLE_PAGES);

export function isConsolePath(path: string): boolean {
  if (PAGES.has(path) || path.startsWith(CONSOLE_ASSETS)) return true;
  for (const p of CONSOLE_PAGE_PREFIXES) if (path.startsWith(p) && path.length > p.length && !path.slice(p.length).includes("/")) return true;
  return false;
}
