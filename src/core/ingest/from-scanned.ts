/**
 * The fast path's half of normalisation: the columns of a line that scan.ts or
 * scan-envelope.ts read without parsing it, by the same rules as normalise.ts applies to a
 * parsed one (tests/ingest/scan.test.ts holds the two paths to the same results).
 */
import { toU64 } from "../../protocol/json";
import { MAX_POT_ID, MAX_POT_TYPE, MAX_TYPE, isAddress, label, prefixOf, type IngestEvent, type NormaliseContext } from "./normalise";
import { TIME_ABSENT, timeOf, type ScannedLine } from "./scan";
import { farOff } from "./timestamp";

/**
 * The columns of a line the fast path scanned, by the same rules as `fromNative` + `build`.
 * Null where those rules would fail or keep something in data that the scan cut out (an
 * unreadable or far-off timestamp, an address unfit for the column): the general path handles
 * and words those.
 */
export function fromScanned(s: ScannedLine, ctx: NormaliseContext): IngestEvent | null {
  if (s.shape !== 0) return fromScannedEnvelope(s, ctx);
  const eventType = s.eventid;
  if (eventType.length === 0 || eventType.length > MAX_TYPE) return null;
  const potId = label(s.honeypotId ?? s.potId, MAX_POT_ID);
  const potType = label(s.honeypotType ?? s.potType ?? prefixOf(eventType), MAX_POT_TYPE);
  if (potId === undefined || potType === undefined) return null;
  const nodeId = nodeOf(s, ctx, potId);
  if (nodeId === undefined) return null;
  const time = s.timestamp.kind !== TIME_ABSENT ? s.timestamp : s.time;
  let ts = timeOf(s.line, time);
  if (ts === null) {
    if (time.kind !== TIME_ABSENT) return null;
    ts = ctx.receivedAt;
  } else if (farOff(ts, ctx.receivedAt, ctx.maxAgeMs ?? 0)) return null;
  if (s.srcIp !== null && !isAddress(s.srcIp)) return null;
  return { node_id: nodeId, pot_id: potId, pot_type: potType, event_type: eventType, ts, src_ip: s.srcIp, text: null, username: s.username, password: s.password };
}

/**
 * The columns of a PotEvent or PotLog envelope the fast path scanned (scan-envelope.ts), by
 * the rules of `fromPotEvent` / `fromPotLog` + `build`; null where the general path must
 * decide or word the error.
 */
function fromScannedEnvelope(s: ScannedLine, ctx: NormaliseContext): IngestEvent | null {
  const eventType = s.eventid;
  if (eventType.length === 0 || eventType.length > MAX_TYPE) return null;
  const potId = label(s.potId, MAX_POT_ID);
  let potType = label(s.potType, MAX_POT_TYPE);
  if (potId === undefined || potType === undefined) return null;
  const nodeId = nodeOf(s, ctx, potId);
  if (nodeId === undefined) return null;
  if (potType === null) {
    const known = potId !== null ? (ctx.potTypeOf?.(nodeId, potId) ?? null) : null;
    potType = known ?? label(prefixOf(eventType), MAX_POT_TYPE) ?? null;
  }
  // A PotLog's honeypot time (s.time) must be readable: it was cut from data.
  const time = s.time.kind !== TIME_ABSENT ? s.time : s.timestamp;
  let ts = timeOf(s.line, time);
  if (ts === null) {
    if (time.kind !== TIME_ABSENT) return null;
    ts = ctx.receivedAt;
  } else if (farOff(ts, ctx.receivedAt, ctx.maxAgeMs ?? 0)) return null;
  if (s.srcIp !== null && !isAddress(s.srcIp)) return null;
  return { node_id: nodeId, pot_id: potId, pot_type: potType, event_type: eventType, ts, src_ip: s.srcIp, text: null, username: s.username, password: s.password };
}

/**
 * The event's node: the proven sender's, else the one the line names, else the stream's or the
 * pot's owner. Undefined when the line names a node id that is no u64.
 */
function nodeOf(s: ScannedLine, ctx: NormaliseContext, potId: string | null): bigint | null | undefined {
  let nodeId: bigint | null = null;
  if (s.nodeDigits !== null) {
    nodeId = u64OfDigits(s.nodeDigits);
    if (nodeId === null) return undefined;
  }
  if (ctx.nodeProven && ctx.nodeId !== null) return ctx.nodeId;
  return nodeId ?? ctx.nodeId ?? (potId !== null ? ctx.nodeOfPot(potId) : null);
}

// A node sends its own id on every line: the digits are converted once.
let lastDigits = "";
let lastU64: bigint | null = null;

function u64OfDigits(digits: string): bigint | null {
  if (digits.length > 20) return null;
  if (digits !== lastDigits) {
    lastDigits = digits;
    lastU64 = toU64(BigInt(digits));
  }
  return lastU64;
}

