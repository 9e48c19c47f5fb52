/**
 * Live-feed topics. Every message is published to one topic per kind, and, when some client
 * asked for it, to narrower topics that add the node, pot or event type it carries. A client
 * subscribes to exactly one topic per kind it wants, so Bun's native pub/sub does all the
 * fan-out and no per-client filtering runs in JavaScript.
 *
 * A filter matches a message only if the message carries that field with that value: a client
 * filtering on pot_id gets that pot's events and status, not its node's heartbeats.
 */
import { toU64 } from "../../protocol/json";

export const FEED_KINDS = ["PotEvent", "PotStatusUpdate", "NodeStatusUpdate", "NodeRegistration", "NodeDrop", "NodeEvent", "CommandResult"] as const;
export type FeedKind = (typeof FEED_KINDS)[number];
const FEED_KIND_SET = new Set<string>(FEED_KINDS);

/** Which fields each kind carries, in topic order. */
const FIELDS: Record<FeedKind, readonly ("n" | "p" | "t")[]> = {
  PotEvent: ["n", "p", "t"],
  PotStatusUpdate: ["n", "p"],
  NodeStatusUpdate: ["n"],
  NodeRegistration: ["n"],
  NodeDrop: ["n"],
  NodeEvent: ["n"],
  CommandResult: ["n"],
};

export interface FeedFilter {
  kinds: FeedKind[];
  node_id?: bigint;
  pot_id?: string;
  event_type?: string;
}

export interface FeedMeta {
  node_id?: bigint | null;
  pot_id?: string | null;
  event_type?: string | null;
}

export function isFeedKind(kind: string): kind is FeedKind {
  return FEED_KIND_SET.has(kind);
}

/** Reads `?kinds=PotEvent,CommandResult&node_id=..&pot_id=..&event_type=..`. */
const FILTER_KEYS = new Set(["kinds", "node_id", "pot_id", "event_type", "token"]);

export function parseFeedFilter(q: URLSearchParams): { ok: true; filter: FeedFilter } | { ok: false; message: string } {
  const filter: FeedFilter = { kinds: [...FEED_KINDS] };
  // A misspelt filter would silently subscribe to everything.
  for (const key of q.keys()) {
    if (!FILTER_KEYS.has(key)) return { ok: false, message: `unknown query parameter ${JSON.stringify(key)}; the feed takes ${[...FILTER_KEYS].join(", ")}` };
  }
  const kinds = q.get("kinds");
  if (kinds) {
    const list = kinds.split(",").map((k) => k.trim()).filter(Boolean);
    const bad = list.filter((k) => !isFeedKind(k));
    if (bad.length) return { ok: false, message: `unknown kinds ${bad.join(", ")}; known: ${FEED_KINDS.join(", ")}` };
    filter.kinds = list as FeedKind[];
  }
  const node = q.get("node_id");
  if (node !== null) {
    const id = toU64(node);
    if (id === null) return { ok: false, message: "node_id must be an unsigned 64-bit integer" };
    filter.node_id = id;
  }
  const pot = q.get("pot_id");
  if (pot) filter.pot_id = pot;
  const type = q.get("event_type");
  if (type) filter.event_type = type;
  return { ok: true, filter };
}

function topic(kind: string, n?: bigint | null, p?: string | null, t?: string | null): string {
  let s = kind;
  if (n !== undefined && n !== null) s += `|n=${n}`;
  if (p !== undefined && p !== null) s += `|p=${p}`;
  if (t !== undefined && t !== null) s += `|t=${t}`;
  return s;
}

/**
 * The topics a client subscribes to. A filter on a field that a kind does not carry leaves
 * that kind out (nothing of it could match).
 */
export function subscriptionTopics(f: FeedFilter): string[] {
  const out: string[] = [];
  for (const kind of f.kinds) {
    const fields = FIELDS[kind];
    if (f.pot_id !== undefined && !fields.includes("p")) continue;
    if (f.event_type !== undefined && !fields.includes("t")) continue;
    out.push(topic(kind, f.node_id, f.pot_id, f.event_type));
  }
  return out;
}

/**
 * Which fields a subscription names, as bits (node, pot, event type): the kinds of topic a
 * message may have to go to. A client subscribes with one mask per kind, so the hub need only
 * build the topics of the masks someone uses, usually the bare kind alone.
 */
const FIELD_BITS = { n: 1, p: 2, t: 4 } as const;

export function filterMask(f: FeedFilter): number {
  return (f.node_id !== undefined ? FIELD_BITS.n : 0) | (f.pot_id !== undefined ? FIELD_BITS.p : 0) | (f.event_type !== undefined ? FIELD_BITS.t : 0);
}

/** The topic of a message for subscriptions naming the fields in `mask`; null when the message does not carry one of them. */
export function messageTopic(kind: FeedKind, meta: FeedMeta, mask: number): string | null {
  const n = mask & FIELD_BITS.n ? (meta.node_id ?? null) : undefined;
  const p = mask & FIELD_BITS.p ? (meta.pot_id ?? null) : undefined;
  const t = mask & FIELD_BITS.t ? (meta.event_type ?? null) : undefined;
  if (n === null || p === null || t === null) return null;
  const fields = FIELDS[kind];
  if ((n !== undefined && !fields.includes("n")) || (p !== undefined && !fields.includes("p")) || (t !== undefined && !fields.includes("t"))) return null;
  return topic(kind, n, p, t);
}

/** The fields a payload carries, for messages that arrive already serialised (the stream). */
export function metaOf(payload: unknown): FeedMeta {
  if (typeof payload !== "object" || payload === null) return {};
  const p = payload as Record<string, unknown>;
  return {
    node_id: typeof p.node_id === "bigint" ? p.node_id : toU64(p.node_id),
    pot_id: typeof p.pot_id === "string" ? p.pot_id : null,
    event_type: typeof p.event_type === "string" ? p.event_type : null,
  };
}
