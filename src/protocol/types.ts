/**
 * Schema building blocks shared by the protocol, REST and the node agent.
 */
import { Kind, Type, TypeRegistry, type TSchema } from "@sinclair/typebox";
import { toU64 } from "./json";

// A u64 lives in memory as a bigint (exact above 2^53) and is documented as an integer.
TypeRegistry.Set("U64", (_schema, value) => typeof value === "bigint" && toU64(value) !== null);

/** Unsigned 64-bit id, exact; a `bigint` in memory, a JSON integer on the wire. */
export const U64 = (options: { description?: string; example?: unknown } = {}) =>
  Type.Unsafe<bigint>({ [Kind]: "U64", type: "integer", format: "uint64", minimum: 0, ...options });

export const NodeId = U64({ description: "Node identifier, an unsigned 64-bit integer (exact).", example: 18446744073709551557n });

/** A pot id names a folder on the node, so it is kept to characters that cannot escape one. */
export const POT_ID_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
export const PotId = Type.String({ pattern: POT_ID_PATTERN, description: "Honeypot identifier, unique per node.", example: "cowrie-01" });

export const NodeType = Type.String({ description: "Kind of node: `Full` or `Agent`.", example: "Full" });
export const NodeStatus = Type.String({
  description: "Node status: Connected, Deploying, Running, Stopped, Failed or Unknown.",
  example: "Running",
});
/**
 * Core's own status for a pot that no node reported: a honeypot that sends events (to its
 * node's relay, or straight to Core) without having been installed by its node. Never sent by
 * a node, so not among POT_STATUSES.
 */
export const EXTERNAL = "External";
/** The node id of an External pot whose events name no node (sent straight to the event socket). */
export const NO_NODE = 0n;
export const PotStatus = Type.String({
  description:
    "Honeypot status: Installing, Running, Stopped or Failed, as its node reports; External for a pot Core registered from its events alone (a honeypot its node did not install, or one that sends straight to Core's event socket): Core cannot start or stop it, only remove it from the registry.",
  example: "Running",
});

// The protocol's enums, checked on every message from a node (the REST shapes above stay plain
// strings, so that a database written before the check still reads).
export const NODE_TYPES = ["Full", "Agent"] as const;
export const NODE_STATUSES = ["Connected", "Deploying", "Running", "Stopped", "Failed", "Unknown"] as const;
export const POT_STATUSES = ["Installing", "Running", "Stopped", "Failed"] as const;
const oneOf = (values: readonly string[], description: string, example: string) => Type.Union(values.map((v) => Type.Literal(v)), { description, example });
export const NodeTypeValue = oneOf(NODE_TYPES, "Kind of node: `Full` or `Agent`.", "Full");
export const NodeStatusValue = oneOf(NODE_STATUSES, "Node status: Connected, Deploying, Running, Stopped, Failed or Unknown.", "Running");
export const PotStatusValue = oneOf(POT_STATUSES, "Honeypot status: Installing, Running, Stopped or Failed.", "Running");

export const StringMap = Type.Record(Type.String(), Type.String());

export type Static<T extends TSchema> = T["static"];
