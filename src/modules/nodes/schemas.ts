/**
 * A node's REST shapes, as docs/api.md names them: one schema per shape feeds validation,
 * TypeScript types and the OpenAPI document.
 */
import { Type } from "@sinclair/typebox";
import { NodeId, NodeStatus, NodeType } from "../../protocol/types";
import { HoneypotInNode } from "../pots/schemas";

export const NodeSummary = Type.Object(
  {
    node_id: NodeId,
    node_name: Type.String({ example: "sensor-eu-1" }),
    status: NodeStatus,
    node_type: NodeType,
  },
  { example: { node_id: 18446744073709551557n, node_name: "sensor-eu-1", status: "Running", node_type: "Full" } },
);
export type NodeSummary = typeof NodeSummary.static;

export const NodeDetail = Type.Composite(
  [
    NodeSummary,
    Type.Object({
      address: Type.Union([Type.String(), Type.Null()], {
        description: "Where the node says it can be reached (NodeRegistration `address`); the address its connection came from when it gave none.",
        example: "10.0.0.5",
      }),
      // TypeBox's integer: Elysia's t.Integer also takes numeric strings, which a response never has.
      port: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: "The port the node gave in its NodeRegistration; null when it gave none.", example: 9001 }),
      last_seen: Type.String({ format: "date-time", description: "When Core last heard from the node (any message: heartbeat, status, event)." }),
      honeypots: Type.Array(HoneypotInNode),
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

export const NodeList = Type.Object({ nodes: Type.Array(NodeSummary) });
