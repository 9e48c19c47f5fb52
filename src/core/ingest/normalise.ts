/**
 * Turns every accepted event shape into one normalised event. Pure: no sockets, no database,
 * no clock (the receive time comes in), so the rules are tested on their own.
 *
 * Accepted shapes (docs/protocol.md, "Events"):
 * - a PotEvent, PotLog or NodeEvent envelope `{"version":2,"message":{"PotEvent":{...}}}`;
 * - a bare PotEvent in either field style: `{node_id, pot_id, pot_type, event_type, timestamp,
 *   data}` or `{node_id, pot_id, event, message, metadata, timestamp}`; a bare PotLog;
 * - flat honeypot-native JSON with `eventid` (Cowrie's output plugin, the HonnyPotter PHP
 *   forwarder): pot from `honeybee_honeypot_id` / `pot_id`, kind from
 *   `honeybee_honeypot_type` / `pot_type` or the eventid prefix.
 *
 * `data` keeps every field that did not become a normalised column, so nothing a honeypot
 * sent is lost.
 */
import { parseWithIds, stringify, toU64 } from "../../protocol/json";
import { isEnvelope } from "../../protocol/classify";
import { decodeEnvelope } from "../../protocol/messages";
import { isoTime } from "../../protocol/time";
import { farOff, parseTimestamp } from "./timestamp";
import type { EventRecord } from "../../protocol/records";

export interface NormalisedEvent {
  node_id: bigint | null;
  pot_id: string | null;
  pot_type: string | null;
  event_type: string;
  /** Event time, milliseconds since the epoch (UTC). */
  ts: number;
  src_ip: string | null;
  data: Record<string, unknown>;
  /** The event named a time that could not be read: `ts` is the receive time, the text is in data. */
  unreadableTimestamp?: boolean;
}

/**
 * An event as the pipeline keeps it until it is committed: the columns, `data` as JSON text
 * (what is stored), and the credentials it carries (for the stats). Events read by the fast
 * path (scan.ts) never exist as objects; their data is parsed again only for a live-feed
 * subscriber or the event log.
 */
export interface IngestEvent extends Omit<NormalisedEvent, "data"> {
  /** Data as JSON text; null for a scanned line, whose data the pipeline copies from the line (scan.ts). */
  text: string | null;
  username: string | null;
  password: string | null;
}

/** The event as every reader sees it (REST, live feed, log): one schema, src/protocol/records.ts. */
export type { EventRecord } from "../../protocol/records";

export interface NormaliseContext {
  /** Receive time in ms: the timestamp of an event that has none, or whose own is far off. */
  receivedAt: number;
  /** Events older than this (ms before receivedAt; 0: no limit) are far off: retention would delete them at once. */
  maxAgeMs?: number;
  /** The sender's node (control connection or EventStreamHello), when it named one. */
  nodeId: bigint | null;
  /**
   * The sender proved it is `nodeId` (a registered control connection, an authenticated event
   * stream): its events are that node's, whatever node_id they carry.
   */
  nodeProven?: boolean;
  /** Registry lookup for events that name a pot but no node. */
  nodeOfPot(potId: string): bigint | null;
  /** Registry lookup: the kind of a pot (of this node, when known), for events that do not say. */
  potTypeOf?(nodeId: bigint | null, potId: string): string | null;
}

export type NormaliseResult = { ok: true; event: NormalisedEvent } | { ok: false; error: string };

export const MAX_TYPE = 128;
export const MAX_POT_ID = 128;
export const MAX_POT_TYPE = 64;
export const MAX_IP = 64;

const EVENT_KINDS = new Set(["PotEvent", "PotLog", "NodeEvent"]);

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const fail = (error: string): NormaliseResult => ({ ok: false, error });

export function normalise(value: unknown, ctx: NormaliseContext): NormaliseResult {
  if (!isObject(value)) return fail("an event must be a JSON object");
  // The relay's rule (isEnvelope): Cowrie's events carry `version` and `message` fields of their own.
  if (isEnvelope(value)) {
    const msg = decodeEnvelope(value, EVENT_KINDS);
    if (!msg.ok) return fail(msg.message);
    if (msg.kind === "PotEvent") return fromPotEvent(msg.payload, ctx);
    if (msg.kind === "PotLog") return fromPotLog(msg.payload, ctx);
    if (msg.kind === "NodeEvent") {
      if (ctx.nodeId === null) return fail("a NodeEvent needs a node: open the stream with EventStreamHello {node_id}");
      return { ok: true, event: fromNodeEvent(ctx.nodeId, msg.payload, ctx.receivedAt) };
    }
    return fail(`${msg.kind} is not an event`);
  }
  if (typeof value.eventid === "string") return fromNative(value, ctx);
  if (typeof value.event_type === "string" || typeof value.event === "string") return fromPotEvent(value, ctx);
  if (typeof value.log_type === "string") return fromPotLog(value, ctx);
  return fail("not an event: it has none of eventid, event_type, event, log_type and is not a PotEvent/PotLog envelope");
}

/** Flat honeypot JSON (`eventid`, `src_ip`, `timestamp`, ...). */
function fromNative(o: Obj, ctx: NormaliseContext): NormaliseResult {
  const eventType = o.eventid as string;
  const potId = o.honeybee_honeypot_id ?? o.pot_id;
  const potType = o.honeybee_honeypot_type ?? o.pot_type ?? prefixOf(eventType);
  const data: Obj = {};
  // A switch, not a Set lookup: this loop runs for every event and is 4x faster this way (measured).
  for (const k in o) {
    switch (k) {
      case "eventid":
      case "node_id":
      case "pot_id":
      case "pot_type":
      case "honeybee_honeypot_id":
      case "honeybee_honeypot_type":
      case "timestamp":
      case "src_ip":
        break;
      case "__proto__":
        setKey(data, k, o[k]);
        break;
      default:
        data[k] = o[k];
    }
  }
  // Cowrie also sends `time` (unix seconds with a fraction); it stays in data, and is the
  // fallback when `timestamp` is missing.
  return build(ctx, { eventType, nodeId: o.node_id, potId, potType, timestamp: o.timestamp ?? o.time, srcIp: o.src_ip, data, keepTimestampIn: o.timestamp === undefined ? null : "timestamp" });
}

/** PotEvent: `event_type` + `data`, or `event` + `message` + `metadata`. */
function fromPotEvent(o: Obj, ctx: NormaliseContext): NormaliseResult {
  const data: Obj = {};
  for (const k in o) {
    switch (k) {
      case "node_id":
      case "pot_id":
      case "pot_type":
      case "event_type":
      case "event":
      case "timestamp":
      case "src_ip":
      case "data":
      case "metadata":
        break;
      default:
        setKey(data, k, o[k]);
    }
  }
  // The nested objects are flattened into data so both styles read the same downstream
  // (`data.username`, `data.src_ip`); a nested key loses to a top-level one of the same name.
  for (const nested of [o.data, o.metadata]) {
    if (isObject(nested)) {
      for (const k in nested) if (!Object.hasOwn(data, k)) setKey(data, k, nested[k]);
    } else if (nested !== undefined && nested !== null) {
      data[nested === o.data ? "data" : "metadata"] = nested;
    }
  }
  const eventType = o.event_type ?? o.event;
  const srcIp = o.src_ip ?? data.src_ip;
  if (o.src_ip === undefined && typeof data.src_ip === "string") delete data.src_ip;
  return build(ctx, { eventType, nodeId: o.node_id, potId: o.pot_id, potType: o.pot_type, timestamp: o.timestamp, srcIp, data, keepTimestampIn: "timestamp", lookupType: true, guessType: typeof eventType === "string" ? prefixOf(eventType) : null });
}

/**
 * PotLog. The upstream Go node sends every honeypot event as one: `log_type` is the honeypot's
 * event id (`cowrie.login.failed`) and `data` its fields (as strings, with `message`). Such a
 * PotLog is stored as that event, exactly as if the line had come flat: `event_type` is the
 * event id, the honeypot's own `timestamp` and `src_ip` become the columns. A `log_type`
 * without a dot (`stdout`, `stderr`) is a process's output, stored as `log.<log_type>`
 * (docs/protocol.md, "PotLog").
 */
function fromPotLog(o: Obj, ctx: NormaliseContext): NormaliseResult {
  const logType = o.log_type;
  if (typeof logType !== "string" || logType.length === 0) return fail("a PotLog needs a log_type string");
  const honeypotEvent = isEventId(logType);
  const inner = isObject(o.data) ? o.data : null;
  const data: Obj = {};
  for (const k in o) {
    switch (k) {
      case "node_id":
      case "pot_id":
      case "pot_type":
      case "log_type":
      case "timestamp":
      case "data":
        break;
      default:
        setKey(data, k, o[k]);
    }
  }
  if (inner) {
    for (const k in inner) if (!Object.hasOwn(data, k)) setKey(data, k, inner[k]);
  } else if (o.data !== undefined && o.data !== null) {
    data.line = o.data;
  }
  const srcIp = data.src_ip;
  delete data.src_ip; // the column; kept in data by build() only when unusable as one
  if (!honeypotEvent) {
    return build(ctx, { eventType: `log.${logType}`, nodeId: o.node_id, potId: o.pot_id, potType: o.pot_type, timestamp: o.timestamp, srcIp, data, keepTimestampIn: "timestamp", lookupType: true });
  }
  // The fields a flat line of this event would have had as columns (see fromNative).
  const own = { potId: data.honeybee_honeypot_id ?? data.pot_id, potType: data.honeybee_honeypot_type ?? data.pot_type, nodeId: data.node_id };
  for (const k of ["honeybee_honeypot_id", "honeybee_honeypot_type", "pot_id", "pot_type", "node_id"]) delete data[k];
  if (data.eventid === logType) delete data.eventid;
  // The honeypot's own time (Cowrie's, to the microsecond) over the node's (to the second).
  let timestamp = o.timestamp;
  if (parseTimestamp(data.timestamp) !== null) {
    timestamp = data.timestamp;
    delete data.timestamp;
  }
  return build(ctx, {
    eventType: logType,
    nodeId: o.node_id ?? own.nodeId,
    potId: o.pot_id ?? own.potId,
    potType: o.pot_type ?? own.potType,
    timestamp,
    srcIp,
    data,
    keepTimestampIn: "timestamp" in data ? null : "timestamp",
    lookupType: true,
    guessType: prefixOf(logType),
  });
}

/** A honeypot's event id (`cowrie.login.failed`): dotted. `stdout`, `stderr` and other plain names are not. */
function isEventId(logType: string): boolean {
  const dot = logType.indexOf(".");
  return dot > 0 && dot < logType.length - 1;
}

/** NodeEvent (Started, Stopped, Alarm{description}, Error{message}) as an event of its node. */
export function fromNodeEvent(nodeId: bigint, payload: unknown, receivedAt: number): NormalisedEvent {
  const name = typeof payload === "string" ? payload : isObject(payload) ? (Object.keys(payload)[0] ?? "Unknown") : "Unknown";
  const inner = isObject(payload) ? payload[name] : null;
  return {
    node_id: nodeId,
    pot_id: null,
    pot_type: null,
    event_type: `node.${name.toLowerCase()}`,
    ts: receivedAt,
    src_ip: null,
    data: isObject(inner) ? { ...inner } : {},
  };
}

interface Parts {
  eventType: unknown;
  nodeId: unknown;
  potId: unknown;
  potType: unknown;
  timestamp: unknown;
  srcIp: unknown;
  data: Obj;
  /** Where to keep a timestamp that could not be read, so it is not lost. */
  keepTimestampIn: string | null;
  /**
   * Without a pot_type: the registry's kind of the pot, else `guessType` (an event id's prefix).
   * For nodes' messages (the Go node's PotEvent has no pot_type); flat lines keep their own
   * rule, which the fast path shares (fromScanned).
   */
  lookupType?: boolean;
  guessType?: string | null;
}

function build(ctx: NormaliseContext, p: Parts): NormaliseResult {
  if (typeof p.eventType !== "string" || p.eventType.length === 0) return fail("the event type must be a non-empty string");
  if (p.eventType.length > MAX_TYPE) return fail(`the event type is longer than ${MAX_TYPE} characters`);

  let nodeId: bigint | null = null;
  if (p.nodeId !== undefined && p.nodeId !== null) {
    nodeId = toU64(p.nodeId);
    if (nodeId === null) return fail(`node_id must be an unsigned 64-bit integer, got ${String(p.nodeId).slice(0, 40)}`);
  }
  const potId = label(p.potId, MAX_POT_ID);
  if (potId === undefined) return fail(`pot_id must be a string of at most ${MAX_POT_ID} characters`);
  let potType = label(p.potType, MAX_POT_TYPE);
  if (potType === undefined) return fail(`pot_type must be a string of at most ${MAX_POT_TYPE} characters`);
  if (ctx.nodeProven && ctx.nodeId !== null) nodeId = ctx.nodeId;
  else nodeId ??= ctx.nodeId ?? (potId !== null ? ctx.nodeOfPot(potId) : null);
  if (potType === null && p.lookupType) {
    const known = potId !== null ? (ctx.potTypeOf?.(nodeId, potId) ?? null) : null;
    potType = known ?? label(p.guessType, MAX_POT_TYPE) ?? null;
  }

  let ts = parseTimestamp(p.timestamp);
  let unreadableTimestamp = false;
  if (ts === null) {
    ts = ctx.receivedAt;
    if (p.timestamp !== undefined && p.timestamp !== null) {
      unreadableTimestamp = true;
      if (p.keepTimestampIn) p.data[p.keepTimestampIn] = p.timestamp;
    }
  } else if (farOff(ts, ctx.receivedAt, ctx.maxAgeMs ?? 0)) {
    // Like an unreadable time: stored at the receive time, what the event said kept in data.
    ts = ctx.receivedAt;
    if (p.keepTimestampIn) p.data[p.keepTimestampIn] = p.timestamp;
  }

  let srcIp: string | null = null;
  if (typeof p.srcIp === "string" && isAddress(p.srcIp)) srcIp = p.srcIp;
  else if (p.srcIp !== undefined && p.srcIp !== null) p.data.src_ip = p.srcIp; // unusable as a column, kept as sent

  const event: NormalisedEvent = { node_id: nodeId, pot_id: potId, pot_type: potType, event_type: p.eventType, ts, src_ip: srcIp, data: p.data };
  if (unreadableTimestamp) event.unreadableTimestamp = true;
  return { ok: true, event };
}

/**
 * `data[k] = v`, except that a `__proto__` key stays a plain key: assigned, it would set the
 * object's prototype (dropped from the stored JSON, yet read as the event's credentials).
 */
function setKey(data: Obj, k: string, v: unknown): void {
  if (k === "__proto__") Object.defineProperty(data, k, { value: v, enumerable: true, writable: true, configurable: true });
  else data[k] = v;
}

/** A pot id or kind: a short string (numbers are accepted as their decimal text). Undefined when invalid. */
export function label(v: unknown, max: number): string | null | undefined {
  if (v === undefined || v === null || v === "") return null;
  if (typeof v === "number" && Number.isFinite(v)) v = String(v);
  if (typeof v !== "string" || v.length > max) return undefined;
  return v;
}

export function prefixOf(eventType: string): string | null {
  const dot = eventType.indexOf(".");
  return dot > 0 ? eventType.slice(0, dot) : null;
}

/** An address fit for a column: short, printable, no separators (IPv4, IPv6, host names). */
export function isAddress(s: string): boolean {
  if (s.length === 0 || s.length > MAX_IP) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 32 || c === 127) return false;
  }
  return true;
}

export function toIngestEvent(e: NormalisedEvent): IngestEvent {
  const { username, password } = credentialsOf(e.data);
  const ev: IngestEvent = { node_id: e.node_id, pot_id: e.pot_id, pot_type: e.pot_type, event_type: e.event_type, ts: e.ts, src_ip: e.src_ip, text: dataText(e.data), username, password };
  if (e.unreadableTimestamp) ev.unreadableTimestamp = true;
  return ev;
}

/** JSON text of an event's data; `stringify` (exact bigints) only when plain JSON cannot. */
function dataText(data: Obj): string {
  try {
    return JSON.stringify(data);
  } catch {
    return stringify(data);
  }
}

/** Data as stored back into an object; exact u64 node ids need the exact parser, the rest the fast one. */
export function parseData(text: string): Obj {
  return (text.includes('"node_id"') ? parseWithIds(text) : JSON.parse(text)) as Obj;
}

export function toRecord(id: number, e: IngestEvent & { text: string }): EventRecord {
  return { id, node_id: e.node_id, pot_id: e.pot_id, pot_type: e.pot_type, event_type: e.event_type, timestamp: isoTime(e.ts), src_ip: e.src_ip, data: parseData(e.text) };
}

/** Credentials an event carries (for the stats), read from its data. */
export function credentialsOf(data: Obj): { username: string | null; password: string | null } {
  const u = data.username;
  const p = data.password;
  return { username: typeof u === "string" ? u : null, password: typeof p === "string" ? p : null };
}
