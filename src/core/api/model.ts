/**
 * REST resource shapes, exactly as docs/api.md and docs/protocol.md name them. One schema per shape feeds
 * validation, TypeScript types and the OpenAPI document.
 */
import { t } from "elysia";
import { NodeId, NodeStatus, NodeType, PotStatus } from "../../protocol/types";

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
});
export type HoneypotInNode = typeof HoneypotInNode.static;

export const NodeDetail = t.Composite([NodeSummary, t.Object({ honeypots: t.Array(HoneypotInNode) })], {
  example: {
    node_id: 18446744073709551557n,
    node_name: "sensor-eu-1",
    status: "Running",
    node_type: "Full",
    honeypots: [{ pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }],
  },
});
export type NodeDetail = typeof NodeDetail.static;

export const Honeypot = t.Composite([t.Object({ node_id: NodeId }), HoneypotInNode]);
export type Honeypot = typeof Honeypot.static;

export const NodeList = t.Object({ nodes: t.Array(NodeSummary) });
export const HoneypotList = t.Object(
  { honeypots: t.Array(Honeypot) },
  { example: { honeypots: [{ node_id: 18446744073709551557n, pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }] } },
);
export const Health = t.Object({ status: t.Literal("ok") }, { example: { status: "ok" } });
