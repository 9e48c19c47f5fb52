/**
 * Honeypots across every node: the list operation of docs/api.md. A node's own pots are part
 * of its detail (../nodes), shaped by `potFields` here.
 */
import { Elysia } from "elysia";
import type { PotRow } from "../../db/registry-store";
import type { Registry } from "../../core/registry";
import { cachedJson } from "../../core/http/cached-json";
import { errorResponses } from "../../core/http/errors";
import { noQuery } from "../../core/http/query";
import { type HoneypotInNode, HoneypotList } from "./schemas";

/** A pot as REST shows it: its Failed status's message only with that status. */
export function potFields(p: PotRow): HoneypotInNode {
  return { pot_id: p.pot_id, pot_type: p.pot_type, status: p.status as HoneypotInNode["status"], ...(p.status === "Failed" && p.message ? { message: p.message } : {}) };
}

/** GET /api/v1/honeypots, rebuilt when the registry changes; also served straight from Bun's router. */
export function potList(registry: Registry): (request: Request) => Response {
  const pots = cachedJson(HoneypotList, () => registry.version, () => ({
    honeypots: registry.listPots().map((p) => ({ node_id: p.node_id, ...potFields(p) })),
  }));
  return (request) => {
    noQuery(request.url);
    return pots();
  };
}

export const potsApi = (list: (request: Request) => Response) =>
  new Elysia({ name: "pots", tags: ["Honeypots"] }).get("/api/v1/honeypots", ({ request }) => list(request), {
    response: { 200: HoneypotList, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "node_id"; it takes none'] }) },
    detail: { summary: "List all honeypots across all nodes" },
  });
