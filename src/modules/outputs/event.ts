/**
 * The event as outputs and rules see it: a stored event row, plus `geo` from the enrichment
 * (src/geo: `{country, asn, as_org}`; absent when the data knows nothing of the address).
 */
import type { EventRow } from "../../db/event-queries";
import type { Geo } from "../../geo";

export type { Geo };

export type OutEvent = EventRow & { geo?: Geo | null };

/** Alerts are stored as events of type `alert.<rule>` (docs/outputs.md). */
export const ALERT_PREFIX = "alert.";
export const isAlert = (e: { event_type: string }): boolean => e.event_type.startsWith(ALERT_PREFIX);

/** The event in the REST shape (docs/api.md, EventRecord); node ids stay bigints for exact JSON. */
export function eventRecord(e: OutEvent): Record<string, unknown> {
  const r: Record<string, unknown> = {
    id: e.id,
    node_id: e.node_id,
    pot_id: e.pot_id,
    pot_type: e.pot_type,
    event_type: e.event_type,
    timestamp: new Date(e.ts).toISOString(),
    src_ip: e.src_ip,
    data: e.data,
  };
  if (e.geo) r.geo = e.geo;
  return r;
}

/** A value at a dotted path of the event record (`data.input`, `geo.asn`, `src_ip`). */
export function fieldOf(e: OutEvent, path: string): unknown {
  const dot = path.indexOf(".");
  const head = dot < 0 ? path : path.slice(0, dot);
  let v: unknown;
  switch (head) {
    case "id":
      v = e.id;
      break;
    case "node_id":
      v = e.node_id === null ? null : e.node_id.toString();
      break;
    case "pot_id":
    case "pot_type":
    case "event_type":
    case "src_ip":
      v = e[head];
      break;
    case "timestamp":
      v = new Date(e.ts).toISOString();
      break;
    case "data":
      v = e.data;
      break;
    case "geo":
      v = e.geo ?? undefined;
      break;
    default:
      return undefined;
  }
  if (dot < 0) return v;
  for (const key of path.slice(dot + 1).split(".")) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** `*` in a pattern matches any characters; everything else is literal. */
export function globRegex(patterns: readonly string[]): RegExp {
  const alts = patterns.map((p) => p.split("*").map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*"));
  return new RegExp(`^(?:${alts.join("|") || "(?!)"})$`);
}
