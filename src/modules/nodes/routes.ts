/**
 * Nodes: the list and one node with its honeypots, the read operations of docs/api.md.
 */
import { Elysia, t } from "elysia";
import type { Registry } from "../../core/registry";
import { cachedJson } from "../../core/http/cached-json";
import { errorResponses, notFound } from "../../core/http/errors";
import { parseNodeId } from "../../core/http/node-ref";
import { noQuery } from "../../core/http/query";
import { NodeHealth } from "../../protocol/messages";
import { potFields } from "../pots";
import { NodeDetail, NodeList, NodeLocationInput, SensorLocation } from "./schemas";

/** GET /api/v1/nodes, rebuilt when the registry changes; also served straight from Bun's router. */
export function nodeList(registry: Registry): (request: Request) => Response {
  const nodes = cachedJson(NodeList, () => registry.version, () => ({
    nodes: registry.listNodes().map((n) => ({ node_id: n.node_id, node_name: n.node_name, status: n.status, node_type: n.node_type })),
  }));
  return (request) => {
    noQuery(request.url);
    return nodes();
  };
}

const NODE_PARAM = t.Object({ node_id: t.String({ description: "Node identifier (unsigned 64-bit integer).", example: "18446744073709551557" }) });

export const nodesApi = (registry: Registry, list: (request: Request) => Response) =>
  new Elysia({ name: "nodes", tags: ["Nodes"] })
    .get("/api/v1/nodes", ({ request }) => list(request), {
      response: { 200: NodeList, ...errorResponses({ 400: ["bad_request", 'unknown query parameter "status"; it takes none'] }) },
      detail: { summary: "List all registered nodes", description: "Every node Core has seen, with its current status (`Unknown` while it is not connected)." },
    })
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
          location: n.location ?? null,
          address: n.address,
          port: n.port,
          last_seen: new Date(n.last_seen).toISOString(),
          ...heartbeatFields(registry, id),
          honeypots: registry.listPots(id).map(potFields),
        };
      },
      {
        params: NODE_PARAM,
        response: { 200: NodeDetail, ...errorResponses({ 400: ["bad_request", 'node_id must be an unsigned 64-bit integer, got "sensor-eu-1"'], 404: ["not_found", "node 18446744073709551557 is not registered"] }) },
        detail: { summary: "Get one node", description: "The node summary plus the honeypots on the node." },
      },
    )
    .put(
      "/api/v1/nodes/:node_id/location",
      ({ params, body, request }) => {
        noQuery(request.url);
        const id = parseNodeId(params.node_id);
        const location = { lat: body.lat, lon: body.lon, label: body.label?.trim() || null };
        if (!registry.setLocation(id, location)) throw notFound(`node ${id} is not registered`);
        return location;
      },
      {
        params: NODE_PARAM,
        body: NodeLocationInput,
        response: {
          200: SensorLocation,
          ...errorResponses({ 400: ["bad_request", "invalid request: body lat: Expected number to be less or equal to 90"], 404: ["not_found", "node 18446744073709551557 is not registered"] }),
        },
        detail: {
          summary: "Set where a node stands",
          description: "Latitude and longitude in degrees and an optional place name: the console's attack map draws arcs from attack sources to it. Kept across re-registrations and restarts; GET /api/v1/nodes/{node_id} shows it as `location`.",
        },
      },
    );

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The last heartbeat and its figures, only the fields the schema names (a node may send more). */
function heartbeatFields(registry: Registry, id: bigint): Pick<NodeDetail, "last_heartbeat" | "health"> {
  const beat = registry.beatOf(id);
  if (!beat?.health) return { last_heartbeat: iso(beat?.at ?? null), health: null };
  const health: Record<string, unknown> = {};
  for (const k of Object.keys(NodeHealth.properties)) if ((beat.health as Record<string, unknown>)[k] !== undefined) health[k] = (beat.health as Record<string, unknown>)[k];
  return { last_heartbeat: iso(beat.at), health: { ...health, reported_at: iso(beat.healthAt)! } };
}
