/**
 * A node's REST shapes, as docs/api.md names them: one schema per shape feeds validation,
 * TypeScript types and the OpenAPI document.
 */
import { Type } from "@sinclair/typebox";
import { NodeHealth } from "../../protocol/messages";
import { NodeId, NodeStatus, NodeType } from "../../protocol/types";
import { HoneypotInNode } from "../pots/schemas";

/** PUT /api/v1/nodes/{node_id}/location: where the sensor stands, in degrees (WGS 84). */
export const NodeLocationInput = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90, description: "Latitude in degrees, -90 to 90." }),
    lon: Type.Number({ minimum: -180, maximum: 180, description: "Longitude in degrees, -180 to 180." }),
    label: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: "A place name the map's legend shows, e.g. Frankfurt." })),
  },
  { example: { lat: 50.11, lon: 8.68, label: "Frankfurt" } },
);

/** A node's location as stored and answered. */
export const SensorLocation = Type.Object(
  {
    lat: Type.Number({ minimum: -90, maximum: 90 }),
    lon: Type.Number({ minimum: -180, maximum: 180 }),
    label: Type.Union([Type.String(), Type.Null()]),
  },
  { example: { lat: 50.11, lon: 8.68, label: "Frankfurt" } },
);

export const NodeLocation = Type.Union(
  [SensorLocation, Type.Null()],
  { description: "Where the operator says the sensor stands (PUT /api/v1/nodes/{node_id}/location); null until set. The console's attack map draws arcs to it." },
);
export type NodeLocation = typeof NodeLocation.static;

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

/** A node's own figures (NodeStatusUpdate `health`) with the time they arrived; each figure is left out when the node did not send it. */
export const NodeHealthReport = Type.Composite([NodeHealth, Type.Object({ reported_at: Type.String({ format: "date-time", description: "When Core received these figures." }) })]);
export type NodeHealthReport = typeof NodeHealthReport.static;

export const NodeDetail = Type.Composite(
  [
    NodeSummary,
    Type.Object({
      location: NodeLocation,
      address: Type.Union([Type.String(), Type.Null()], {
        description: "Where the node says it can be reached (NodeRegistration `address`); the address its connection came from when it gave none.",
        example: "10.0.0.5",
      }),
      // TypeBox's integer: Elysia's t.Integer also takes numeric strings, which a response never has.
      port: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Null()], { description: "The port the node gave in its NodeRegistration; null when it gave none.", example: 9001 }),
      last_seen: Type.String({ format: "date-time", description: "When Core last heard from the node (any message: heartbeat, status, event)." }),
      last_heartbeat: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
        description: "When the node's last heartbeat (NodeStatusUpdate) reached this Core instance; null before the first (a node connected to another instance of a cluster shows null there).",
      }),
      health: Type.Union([NodeHealthReport, Type.Null()], { description: "The figures of the node's last heartbeat that carried some (docs/protocol.md, NodeStatusUpdate `health`); null for a node that sends none (older nodes)." }),
      honeypots: Type.Array(HoneypotInNode),
    }),
  ],
  {
    example: {
      node_id: 18446744073709551557n,
      node_name: "sensor-eu-1",
      status: "Running",
      node_type: "Full",
      location: { lat: 50.11, lon: 8.68, label: "Frankfurt" },
      address: "10.0.0.5",
      port: 9001,
      last_seen: "2026-11-22T01:07:42.010Z",
      last_heartbeat: "2026-11-22T01:07:30.002Z",
      health: { ...(NodeHealth.example as object), reported_at: "2026-11-22T01:07:30.002Z" },
      honeypots: [{ pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }],
    },
  },
);
export type NodeDetail = typeof NodeDetail.static;

export const NodeList = Type.Object({ nodes: Type.Array(NodeSummary) });
