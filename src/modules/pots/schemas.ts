/**
 * A honeypot's REST shapes, as docs/api.md names them: one schema per shape feeds validation,
 * TypeScript types and the OpenAPI document.
 */
import { Type } from "@sinclair/typebox";
import { PotStatus, U64 } from "../../protocol/types";

export const HoneypotInNode = Type.Object({
  pot_id: Type.String({ example: "cowrie-01" }),
  pot_type: Type.String({ example: "cowrie" }),
  status: PotStatus,
  message: Type.Optional(Type.String({ description: "Why the pot is Failed, as its node reported it (an install's error, the tail of a crashed pot's log); only on a Failed pot.", example: "install failed: pip exited with 1" })),
});
export type HoneypotInNode = typeof HoneypotInNode.static;

export const Honeypot = Type.Composite([
  Type.Object({
    node_id: U64({ description: "The node hosting the honeypot (unsigned 64-bit integer, exact); 0 for an External pot whose events name no node (sent straight to Core's event socket).", example: 18446744073709551557n }),
  }),
  HoneypotInNode,
]);
export type Honeypot = typeof Honeypot.static;

export const HoneypotList = Type.Object(
  { honeypots: Type.Array(Honeypot) },
  { example: { honeypots: [{ node_id: 18446744073709551557n, pot_id: "cowrie-01", pot_type: "cowrie", status: "Running" }] } },
);
