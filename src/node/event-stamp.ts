/**
 * Stamps an event from one of the node's honeypots with where it came from: node_id always
 * (the node is the authority on its own id), pot_id and pot_type when the event names a pot
 * installed here. Pure, so the rules are tested without sockets.
 *
 * Accepted: flat honeypot JSON (Cowrie-style, with `eventid`), a bare PotEvent object, or a
 * PotEvent / PotLog envelope; the same shapes Core's event socket takes. A pot is named by
 * `pot_id` or by Cowrie's HoneyBee output field `honeybee_honeypot_id`. What is an envelope is
 * decided by `isEnvelope`, the rule Core's ingest uses too. No JSON object is refused here:
 * an envelope this relay does not stamp (another kind, another version) is forwarded as it
 * is, and Core stores it or says why not.
 */
import { isEnvelope } from "../protocol/classify";
import { PROTOCOL_VERSION, variant } from "../protocol/messages";

export interface StampContext {
  nodeId: bigint;
  /** Kind of an installed pot, or null when no such pot is installed. */
  potType(potId: string): string | null;
  /** Pot to assume for an event that names none (the connection's earlier pot, or the only pot). */
  fallbackPot: string | null;
}

export type StampResult =
  | { kind: "event"; value: Record<string, unknown>; potId: string | null }
  | { kind: "hello"; acks: boolean }
  | { kind: "rejected"; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function stampEvent(value: unknown, ctx: StampContext): StampResult {
  if (!isObject(value)) return { kind: "rejected", reason: "an event must be a JSON object" };
  if (isEnvelope(value)) {
    const v = variant(value.message)!;
    if (value.version !== PROTOCOL_VERSION) return { kind: "event", value, potId: null };
    if (v.kind === "EventStreamHello") return { kind: "hello", acks: isObject(v.payload) && v.payload.acks === true };
    if ((v.kind !== "PotEvent" && v.kind !== "PotLog") || !isObject(v.payload)) return { kind: "event", value, potId: null };
    const inner = stampFlat(v.payload, ctx);
    return { kind: "event", value: { version: PROTOCOL_VERSION, message: { [v.kind]: inner.value } }, potId: inner.potId };
  }
  const flat = stampFlat(value, ctx);
  return { kind: "event", value: flat.value, potId: flat.potId };
}

/** The pot a flat event names itself, installed here or not. */
export function namedPot(obj: Record<string, unknown>): string | null {
  return [obj.pot_id, obj.honeybee_honeypot_id].find((p): p is string => typeof p === "string" && p.length > 0) ?? null;
}

function stampFlat(obj: Record<string, unknown>, ctx: StampContext): { value: Record<string, unknown>; potId: string | null } {
  const potId = namedPot(obj) ?? ctx.fallbackPot;
  const potType = potId ? ctx.potType(potId) : null;
  // An event naming a pot that is not installed here keeps its own fields: Core may know it.
  if (!potType) return { value: { ...obj, node_id: ctx.nodeId }, potId: null };
  return { value: { ...obj, node_id: ctx.nodeId, pot_id: potId, pot_type: potType }, potId };
}
