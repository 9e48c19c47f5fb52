/**
 * Nodes and honeypots: the four read operations of docs/api.md (health lives beside them).
 */
import { Elysia, t } from "elysia";
import { toU64 } from "../../protocol/json";
import type { Registry } from "../registry";
import { badRequest, errorResponses, notFound } from "./errors";
import { cachedJson } from "./cached-json";
import type { PotRow } from "../../db/registry-store";
import { type HoneypotInNode, HoneypotList, NodeDetail, NodeList } from "./model";
import { noQuery } from "./query";

/** Parses a `{node_id}` path segment: an unsigned 64-bit integer in decimal. */
export function parseNodeId(raw: string): bigint {
  const id = toU64(raw);
  if (id === null) throw badRequest(`node_id must be an unsigned 64-bit integer, got ${JSON.stringify(raw)}`);
  return id;
}

/** A pot as REST shows it: its Failed status's message only with that status. */
function potFields(p: PotRow): HoneypotInNode {
  return { pot_id: p.pot_id, pot_type: p.pot_type, status: p.status as HoneypotInNode["status"], ...(p.status === "Failed" && p.message ? { message: p.message } : {}) };
}

/** The registry's two lists, rebuilt when it changes; createApi serves them straight from Bun's router too. */
export function registryLists(registry: Registry): { "/api/v1/nodes": (request: Request) => Response; "/api/v1/honeypots": (request: Request) => Response } {
  const version = () => registry.version;
  const nodes = cachedJson(NodeList, version, () => ({
    nodes: registry.listNodes().map((n) => ({ node_id: n.node_id, node_name: n.node_name, status: n.status, node_type: n.node_type })),
  }));
  const pots = cachedJson(HoneypotList, version, () => ({
    honeypots: registry.listPots().map((p) => ({ node_id: p.node_id, ...potFields(p) })),
  }));
  return {
    "/api/v1/nodes": (request) => {
      noQuery(request.url);
      return nodes();
    },
    "/api/v1/honeypots": (request) => {
      noQuery(request.url);
      return pots();
    },
  };
}

export const nodesApi = (registry: Registry, lists = registryLists(registry)) => {
  const nodeList = lists["/api/v1/nodes"];
  const potList = lists["/api/v1/honeypots"];
  return new Elysia({ name: "nodes", tags: ["Nodes"] })
    .get(
      "/api/v1/nodes",
      ({ request }) => nodeList(request),
      {
        response: { 200: NodeList, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "status"; it takes none'] }) },
        detail: { summary: "List all registered nodes", description: "Every node Core has seen, with its current status (`Unknown` while it is not connected)." },
      },
    )
    .get(
      "/api/v1/nodes/:node_id",
      ({ params, request }) => {
        noQuery(request.url);
        const id = parseNodeId(params.node_id);
        const n = registry.node(id);
        if (!n) throw notFound(`node ${id} is not registered`);
        return {
          node_id: n.node_id,
          node_name: n.node_name,
          status: n.status,
          node_type: n.node_type,
          address: n.address,
          port: n.port,
          last_seen: new Date(n.last_seen).toISOString(),
          honeypots: registry.listPots(id).map(potFields),
        };
      },
      {
        params: t.Object({ node_id: t.String({ description: "Node identifier (unsigned 64-bit integer).", example: "18446744073709551557" }) }),
        response: { 200: NodeDetail, ...errorResponses({ 400: ["bad_request", 'node_id must be an unsigned 64-bit integer, got "sensor-eu-1"'], 404: ["not_found", "node 18446744073709551557 is not registered"] }) },
        detail: { summary: "Get one node", description: "The node summary plus the honeypots on the node." },
      },
    )
    .get(
      "/api/v1/honeypots",
      ({ request }) => potList(request),
      {
      response: { 200: HoneypotList, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "node_id"; it takes none'] }) },
        detail: { tags: ["Honeypots"], summary: "List all honeypots across all nodes" },
      },
    );
};
