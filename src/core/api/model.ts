/**
 * REST resource shapes, exactly as docs/api.md and docs/protocol.md name them. One schema per shape feeds
 * validation, TypeScript types and the OpenAPI document.
 */
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { NodeId, NodeStatus, NodeType, PotStatus, U64 } from "../../protocol/types";

export const NodeSummary = t.Object(
  {
    node_id: NodeId,
    node_name: t.String({ example: "sensor-eu-1" }),
    status: NodeStatus,
    node_type: NodeType,
  },
  { example: { node_id: 18446744073709551557n, node_name: "sensor-eu-1", status: "Running", node_type: "Full" } },
);
export type NodeSummary = typeof NodeSummary.static;

export const HoneypotInNode = t.Object({
  pot_id: t.String({ example: "cowrie-01" }),
  pot_type: t.String({ example: "cowrie" }),
  status: PotStatus,
  message: t.Optional(t.String({ description: "Why the pot is Failed, as its node reported it (an install's error, the tail of a crashed pot's log); only on a Failed pot.", example: "install failed: pip exited with 1" })),
});
export type HoneypotInNode = typeof HoneypotInNode.static;

export const NodeDetail = t.Composite(
  [
    NodeSummary,
    t.Object({
      address: t.Union([t.String(), t.Null()], {
        description: "Where the node says it can be reached (NodeRegistration `address`); the address its connection came from when it gave none.",
        example: "10.0.0.5",
      }),
      // TypeBox's integer: Elysia's t.Integer also takes numeric strings, which a response never has.
      port: t.Union([Type.Integer({ minimum: 0, maximum: 65535 }), t.Null()], { description: "The port the node gave in its NodeRegistration; null when it gave none.", example: 9001 }),
      last_seen: t.String({ format: "date-time", description: "When Core last heard from the node (any message: heartbeat, status, event)." }),
      honeypots: t.Array(HoneypotInNode),
    }),
  ],
  {
    example: {
      node_id: 18446744073709551557n,
      node_name: "sensor-eu-1",
      status: "Running",
      node_type: "Full",
      address: "10.0.0.5",
      port: 9001,
      last_seen: "2026-11-22T01:07:42.010Z",
      honeypots: [{ pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }],
    },
  },
);
export type NodeDetail = typeof NodeDetail.static;

export const Honeypot = t.Composite([
  t.Object({
    node_id: U64({ description: "The node hosting the honeypot (unsigned 64-bit integer, exact); 0 for an External pot whose events name no node (sent straight to Core's event socket).", example: 18446744073709551557n }),
  }),
  HoneypotInNode,
]);
export type Honeypot = typeof Honeypot.static;

export const NodeList = t.Object({ nodes: t.Array(NodeSummary) });
export const HoneypotList = t.Object(
  { honeypots: t.Array(Honeypot) },
  { example: { honeypots: [{ node_id: 18446744073709551557n, pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }] } },
);
export const Health = t.Object({ status: t.Literal("ok") }, { example: { status: "ok" } });
export const Unhealthy = t.Object(
  { status: t.Literal("unhealthy"), reason: t.String({ description: "What fails, in words: events are not being committed, or the WAL is not being checkpointed." }) },
  { example: { status: "unhealthy", reason: "committing events fails: database or disk is full; 5000 events wait (received, not acknowledged)" } },
);
