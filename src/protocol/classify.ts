/**
 * What a JSON object on an event stream is: a Protocol v2 envelope, or a honeypot's own event.
 * One rule for the node's relay and Core's ingest, so they cannot disagree about a line.
 *
 * Honeypots write fields of their own named `version` and `message` (Cowrie's
 * `cowrie.client.version` has both, as strings), so the two keys alone prove nothing. An
 * object is an envelope only when `version` is an integer and `message` is an object with
 * exactly one key naming a message kind; every other object is a honeypot event
 * (docs/protocol.md, "Events").
 */
import { isMessageKind } from "./messages";

export function isEnvelope(value: Record<string, unknown>): boolean {
  const message = value.message;
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  if (!Number.isInteger(value.version)) return false;
  let kind: string | null = null;
  for (const k in message) {
    if (kind !== null) return false;
    kind = k;
  }
  return kind !== null && Object.hasOwn(message, kind) && isMessageKind(kind);
}
