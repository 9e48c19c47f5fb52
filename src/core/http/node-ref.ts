/**
 * Nodes named in a request: a `{node_id}` path segment is an id; a `node_id` query parameter
 * is as an operator types it, the node's id (20 random digits) or its name (what they
 * remember). An id wins; a name must name exactly one registered node.
 */
import { toU64 } from "../../protocol/json";
import { badRequest } from "./errors";

/** Parses a `{node_id}` path segment: an unsigned 64-bit integer in decimal. */
export function parseNodeId(raw: string): bigint {
  const id = toU64(raw);
  if (id === null) throw badRequest(`node_id must be an unsigned 64-bit integer, got ${JSON.stringify(raw)}`);
  return id;
}

/** The registered nodes' ids and names (the registry's list). */
export type NodeNames = () => readonly { node_id: bigint; node_name: string }[];

export function nodeParam(ref: string, nodes?: NodeNames): bigint {
  const id = toU64(ref);
  if (id !== null) return id;
  if (!nodes) throw badRequest(`query parameter node_id must be an unsigned 64-bit integer, got ${JSON.stringify(ref)}`);
  const named = nodes().filter((n) => n.node_name === ref);
  if (named.length === 1) return named[0]!.node_id;
  if (named.length === 0) throw badRequest(`query parameter node_id: no node is named ${JSON.stringify(ref)}`);
  const ids = named.map((n) => n.node_id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  throw badRequest(`query parameter node_id: ${named.length} nodes are named ${JSON.stringify(ref)} (ids ${ids.join(", ")}); give the node id`);
}
