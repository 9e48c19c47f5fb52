/**
 * Where a value in a table leads (drill-down): an address to its attacker page, anything else
 * to the events it filters. Node filters take a node's name or id (REST resolves names).
 * Usernames, passwords and commands have no REST filter: the events page matches them in the
 * browser over the pages it reads (pages/events.tsx, BROWSER_FIELDS), so they link there too.
 */

/** The values a table can hold, each with the events filter it drills down to. */
export type DrillKind = "src_ip" | "username" | "password" | "command" | "event_type" | "country" | "asn" | "hassh" | "pot_id" | "pot_type" | "node_id";

/** Filters that narrow a drill-down to where the table is (a pot's dashboard, a time range). */
export type Scope = Partial<Record<"node_id" | "pot_id" | "pot_type" | "src_ip" | "since" | "until", string | null | undefined>>;

export const attackerHref = (ip: string) => `/attackers/${encodeURIComponent(ip)}`;

export function eventsHref(filter: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(filter)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `/events?${s}` : "/events";
}

/** The link of one value: an address without a scope goes to its attacker page. */
export function drillHref(kind: DrillKind, value: string, scope: Scope = {}): string {
  // Node 0: events that came to Core with no node (an External pot's); no node filter finds them.
  const s = scope.node_id === "0" ? { ...scope, node_id: null } : scope;
  if (kind === "src_ip" && !Object.values(s).some((v) => v)) return attackerHref(value);
  return eventsHref({ ...s, [kind]: value });
}

/** A TopTable's label as the kind of its values, for tables that name no kind. */
const BY_LABEL: Record<string, DrillKind> = {
  address: "src_ip",
  "source address": "src_ip",
  username: "username",
  password: "password",
  command: "command",
  "event type": "event_type",
  country: "country",
  asn: "asn",
  "network (asn)": "asn",
  network: "asn",
  hassh: "hassh",
  honeypot: "pot_id",
  kind: "pot_type",
};

export const kindOfLabel = (label: string): DrillKind | undefined => BY_LABEL[label.toLowerCase()];
