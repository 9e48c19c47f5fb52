/**
 * One pipeline batch (db/event-store.ts `EventBatch`) as bytes on the bus, from an ingest
 * instance to a writer instance, split into messages no larger than the server's
 * `max_payload`.
 *
 * The source and event type ids of a batch are the ingest instance's own (its pipeline
 * numbers them), so each message carries the dictionary entries its events use, by value:
 * the writer maps them to the database's ids by their natural keys. Each event carries a
 * 64-bit idempotency key made from its sender and its position in that sender's stream
 * (core/ingest/sender-keys.ts), so that an event stored once is not stored again when its
 * message is delivered twice or its node sends it again (event_keys); never from its
 * content, since identical events are still distinct events.
 *
 * Layout (little-endian): magic, version, flags, counts, the variable parts (dictionary
 * entries, credential counts, spool positions, addresses), then the fixed-width columns
 * (aligned to 8 bytes), then the data bytes. Strings are a u32 byte length (0xffffffff:
 * null) and UTF-8.
 */
import type { EventBatch, KeyedBatch, SourceEntry, TypeEntry } from "../db/event-store";

const MAGIC = 0x31424248; // "HBB1"
const VERSION = 1;
const NULL_STR = 0xffffffff;
/** Set when the message's credential counts cover exactly its events (the whole batch in one message). */
const FLAG_CREDS_COMPLETE = 1;
/** Magic, version, flags, n, sources, types, spools, data length, and padding to 8. */
const FIXED_BYTES = 4 + 1 + 1 + 4 * 5 + 8;
/** ts (f64), key (i64), source id, type id, data end (i32 each). */
const PER_EVENT_BYTES = 8 + 8 + 4 + 4 + 4;

/** A batch as a writer receives it: every source and type its events use in `newSources`/`newTypes`. */
/** A decoded message: a batch with its events' idempotency keys (its storage side is db/event-store.ts). */
export type WireBatch = KeyedBatch;

export class WireError extends Error {}

/** What the ingest instance's dictionaries say of its ids. */
export interface WireDictionary {
  sources: Map<number, SourceEntry>;
  types: Map<number, TypeEntry>;
}

const utf8 = new TextEncoder();
const strBytes = (s: string | null): number => 4 + (s === null ? 0 : Buffer.byteLength(s));

function entryOf<T>(m: Map<number, T>, id: number, what: string): T {
  const e = m.get(id);
  if (e === undefined) throw new Error(`the batch uses ${what} ${id}, which the channel's dictionary does not hold`);
  return e;
}

/** Bytes a message's envelope takes besides its events (everything but the per-event parts). */
function envelopeBytes(sources: SourceEntry[], types: TypeEntry[], credCounts: string, spools: [string, number][]): number {
  let n = FIXED_BYTES + strBytes(credCounts);
  for (const s of sources) n += 4 + strBytes(s.nodeId) + strBytes(s.potId) + strBytes(s.potType);
  for (const t of types) n += 4 + strBytes(t.name);
  for (const [k] of spools) n += strBytes(k) + 8;
  return n + 4 + 7; // the addresses' length, padding to 8
}

/**
 * The messages of one batch, each at most `maxBytes`; `keys` one per event. The whole
 * batch goes in one message when it fits (the common case); otherwise it is cut between
 * events, each part with the dictionary entries it uses, the spool positions in the last.
 * An event that does not fit in a message even alone is an error that says so: the bus's
 * `max_payload` must exceed `max_message_bytes` (see `checkPayloadRoom`).
 */
export function encodeBatch(b: EventBatch, keys: BigInt64Array, dict: WireDictionary, maxBytes: number): Uint8Array[] {
  const ips = b.srcIps.split("\n");
  const ipLen = ips.map((ip) => Buffer.byteLength(ip));
  const eventBytes = (i: number, from: number) => PER_EVENT_BYTES + ipLen[i]! + 1 + (b.dataEnds[i]! - from);
  const all = usedEntries(b, 0, b.n, dict);
  let total = envelopeBytes(all.sources, all.types, b.credCounts, b.spools);
  for (let i = 0, from = 0; i < b.n; from = b.dataEnds[i]!, i++) total += eventBytes(i, from);
  if (total <= maxBytes) return [encodePart(b, keys, 0, b.n, all.sources, all.types, b.credCounts, b.spools, ips, true)];

  const out: Uint8Array[] = [];
  let start = 0;
  while (start < b.n) {
    const sources = new Map<number, SourceEntry>();
    const types = new Map<number, TypeEntry>();
    let size = envelopeBytes([], [], "", b.spools);
    let end = start;
    for (let from = start === 0 ? 0 : b.dataEnds[start - 1]!; end < b.n; from = b.dataEnds[end]!, end++) {
      let add = eventBytes(end, from);
      const s = b.sourceId[end]!;
      const t = b.typeId[end]!;
      const src = sources.has(s) ? null : entryOf(dict.sources, s, "source");
      const type = types.has(t) ? null : entryOf(dict.types, t, "event type");
      if (src) add += 4 + strBytes(src.nodeId) + strBytes(src.potId) + strBytes(src.potType);
      if (type) add += 4 + strBytes(type.name);
      if (size + add > maxBytes) {
        if (end === start) {
          throw new Error(
            `an event of ${b.dataEnds[end]! - from} bytes does not fit in one message on the bus (its max_payload is ${maxBytes} bytes): ` +
              "raise the NATS server's max_payload or lower max_message_bytes",
          );
        }
        break;
      }
      size += add;
      if (src) sources.set(s, src);
      if (type) types.set(t, type);
    }
    out.push(encodePart(b, keys, start, end, [...sources.values()], [...types.values()], "", end === b.n ? b.spools : [], ips, false));
    start = end;
  }
  return out;
}

function usedEntries(b: EventBatch, start: number, end: number, dict: WireDictionary) {
  const sources = new Map<number, SourceEntry>();
  const types = new Map<number, TypeEntry>();
  for (let i = start; i < end; i++) {
    const s = b.sourceId[i]!;
    const t = b.typeId[i]!;
    if (!sources.has(s)) sources.set(s, entryOf(dict.sources, s, "source"));
    if (!types.has(t)) types.set(t, entryOf(dict.types, t, "event type"));
  }
  return { sources: [...sources.values()], types: [...types.values()] };
}

function encodePart(
  b: EventBatch,
  keys: BigInt64Array,
  start: number,
  end: number,
  sources: SourceEntry[],
  types: TypeEntry[],
  credCounts: string,
  spools: [string, number][],
  ips: string[],
  credsComplete: boolean,
): Uint8Array {
  const n = end - start;
  const dataFrom = start === 0 ? 0 : b.dataEnds[start - 1]!;
  const dataTo = n === 0 ? dataFrom : b.dataEnds[end - 1]!;
  const srcIps = utf8.encode(ips.slice(start, end).join("\n"));
  const head = envelopeBytes(sources, types, credCounts, spools) - FIXED_BYTES - 4 - 7 + srcIps.length;
  const columnsAt = align8(FIXED_BYTES - 8 + head + 4);
  const total = columnsAt + n * PER_EVENT_BYTES + (dataTo - dataFrom);
  const buf = new Uint8Array(total);
  const v = new DataView(buf.buffer);
  let at = 0;
  const u32 = (x: number) => {
    v.setUint32(at, x, true);
    at += 4;
  };
  const str = (s: string | null) => {
    if (s === null) return u32(NULL_STR);
    const r = utf8.encodeInto(s, buf.subarray(at + 4));
    u32(r.written);
    at += r.written;
  };
  u32(MAGIC);
  buf[at++] = VERSION;
  buf[at++] = credsComplete ? FLAG_CREDS_COMPLETE : 0;
  u32(n);
  u32(sources.length);
  u32(types.length);
  u32(spools.length);
  u32(dataTo - dataFrom);
  for (const s of sources) {
    v.setInt32(at, s.id, true);
    at += 4;
    str(s.nodeId);
    str(s.potId);
    str(s.potType);
  }
  for (const t of types) {
    v.setInt32(at, t.id, true);
    at += 4;
    str(t.name);
  }
  str(credCounts);
  for (const [k, pos] of spools) {
    str(k);
    v.setFloat64(at, pos, true);
    at += 8;
  }
  u32(srcIps.length);
  buf.set(srcIps, at);
  at = align8(at + srcIps.length);
  if (at !== columnsAt) throw new Error(`wire: columns at ${at}, expected ${columnsAt}`);
  new Float64Array(buf.buffer, at, n).set(b.ts.subarray(start, end));
  at += 8 * n;
  new BigInt64Array(buf.buffer, at, n).set(keys.subarray(start, end));
  at += 8 * n;
  new Int32Array(buf.buffer, at, n).set(b.sourceId.subarray(start, end));
  at += 4 * n;
  new Int32Array(buf.buffer, at, n).set(b.typeId.subarray(start, end));
  at += 4 * n;
  const ends = new Int32Array(buf.buffer, at, n);
  for (let i = 0; i < n; i++) ends[i] = b.dataEnds[start + i]! - dataFrom;
  at += 4 * n;
  buf.set(new Uint8Array(b.data, dataFrom, dataTo - dataFrom), at);
  return buf;
}

const align8 = (x: number) => (x + 7) & ~7;

/** Reads one message; a `WireError` says what is wrong with one that is not a batch. */
export function decodeBatch(bytes: Uint8Array): WireBatch {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const len = bytes.byteLength;
  let at = 0;
  const need = (k: number, what: string) => {
    if (k < 0 || at + k > len) throw new WireError(`not an event batch: ${what} runs past the end of the ${len}-byte message`);
  };
  const u32 = (what: string) => {
    need(4, what);
    const x = v.getUint32(at, true);
    at += 4;
    return x;
  };
  const dec = new TextDecoder("utf-8", { fatal: true });
  const str = (what: string): string | null => {
    const k = u32(what);
    if (k === NULL_STR) return null;
    need(k, what);
    let s: string;
    try {
      s = dec.decode(bytes.subarray(at, at + k));
    } catch {
      throw new WireError(`not an event batch: ${what} is not UTF-8`);
    }
    at += k;
    return s;
  };
  const text = (what: string) => {
    const s = str(what);
    if (s === null) throw new WireError(`not an event batch: ${what} is missing`);
    return s;
  };
  if (len < FIXED_BYTES || v.getUint32(0, true) !== MAGIC) throw new WireError("not an event batch: no batch header");
  at = 4;
  const version = bytes[at++]!;
  if (version !== VERSION) throw new WireError(`not an event batch of this version: version ${version}, this Core reads ${VERSION}`);
  const flags = bytes[at++]!;
  const n = u32("the event count");
  const nSources = u32("the source count");
  const nTypes = u32("the type count");
  const nSpools = u32("the spool count");
  const dataLen = u32("the data length");
  // Each counted thing takes at least a few bytes: counts beyond the message are lies.
  if (n * PER_EVENT_BYTES + dataLen > len || nSources * 16 + nTypes * 8 + nSpools * 12 > len) throw new WireError("not an event batch: counts larger than the message");
  const sources: SourceEntry[] = [];
  for (let i = 0; i < nSources; i++) {
    need(4, "a source id");
    const id = v.getInt32(at, true);
    at += 4;
    sources.push({ id, nodeId: str("a node id"), potId: str("a pot id"), potType: str("a pot type") });
  }
  const types: TypeEntry[] = [];
  for (let i = 0; i < nTypes; i++) {
    need(4, "a type id");
    const id = v.getInt32(at, true);
    at += 4;
    types.push({ id, name: text("an event type") });
  }
  const credCounts = text("the credential counts");
  const spools: [string, number][] = [];
  for (let i = 0; i < nSpools; i++) {
    const k = text("a spool key");
    need(8, "a spool position");
    spools.push([k, v.getFloat64(at, true)]);
    at += 8;
  }
  const srcIps = text("the addresses");
  at = align8(at);
  need(n * PER_EVENT_BYTES + dataLen, "the columns");
  if (at + n * PER_EVENT_BYTES + dataLen !== len) throw new WireError(`not an event batch: ${len - at - n * PER_EVENT_BYTES - dataLen} bytes too many`);
  // Copies: the message's bytes need not be aligned for typed arrays. Uint8Array's own slice:
  // a Buffer's (the NATS client may hand one) is a view into a shared pool.
  const copy = (from: number, to: number) => Uint8Array.prototype.slice.call(bytes, from, to).buffer as ArrayBuffer;
  const col = (bytesPer: number) => {
    const part = copy(at, at + bytesPer * n);
    at += bytesPer * n;
    return part;
  };
  const ts = new Float64Array(col(8));
  const keys = new BigInt64Array(col(8));
  const sourceId = new Int32Array(col(4));
  const typeId = new Int32Array(col(4));
  const dataEnds = new Int32Array(col(4));
  const data = copy(at, at + dataLen);
  // What the writer relies on: every id has its entry, data ends grow within the data, one address per event.
  const sourceSet = new Set(sources.map((s) => s.id));
  const typeSet = new Set(types.map((t) => t.id));
  for (let i = 0, prev = 0; i < n; i++) {
    if (!sourceSet.has(sourceId[i]!) || !typeSet.has(typeId[i]!)) throw new WireError(`not an event batch: event ${i} names a source or type the message does not carry`);
    const end = dataEnds[i]!;
    if (end < prev || end > dataLen) throw new WireError(`not an event batch: the data of event ${i} is out of bounds`);
    if (!Number.isFinite(ts[i]!)) throw new WireError(`not an event batch: event ${i} has no time`);
    prev = end;
  }
  if (n > 0 && dataEnds[n - 1] !== dataLen) throw new WireError("not an event batch: data beyond the last event");
  if (n > 0 ? srcIps.split("\n").length !== n : srcIps !== "") throw new WireError("not an event batch: addresses do not match the events");
  return { n, ts, sourceId, typeId, srcIps, data, dataEnds, credCounts, newSources: sources, newTypes: types, spools, keys, credsComplete: (flags & FLAG_CREDS_COMPLETE) !== 0 };
}

/** A generous envelope around one event: a source of long names, a type, spools, an address, headers. */
export const ENVELOPE_ROOM = 4096;

/**
 * Start-up check: the largest event (`max_message_bytes`) with its envelope must fit in one
 * message of the bus; null when it does, else what to change.
 */
export function checkPayloadRoom(maxMessageBytes: number, maxPayload: number): string | null {
  const room = maxPayload - ENVELOPE_ROOM;
  return maxMessageBytes <= room
    ? null
    : `max_message_bytes (${maxMessageBytes}) leaves no room in a message of the bus (max_payload ${maxPayload} bytes, about 4 KiB of it for the envelope): lower max_message_bytes or raise the NATS servers' max_payload`;
}

/**
 * Several decoded messages as one batch, for one transaction when a writer is behind (one
 * commit per message would cap it at PostgreSQL's commit rate, however small the batches).
 * Each message numbers its sources and types its own way (each ingest instance has its own
 * dictionary): they are renumbered by natural key. Credential counts travel along when every
 * message had its own; otherwise the writer counts them from the data.
 */
export function mergeBatches(parts: WireBatch[]): WireBatch {
  if (parts.length === 1) return parts[0]!;
  let n = 0;
  let dataLen = 0;
  for (const p of parts) {
    n += p.n;
    dataLen += p.data.byteLength;
  }
  const ts = new Float64Array(n);
  const sourceId = new Int32Array(n);
  const typeId = new Int32Array(n);
  const dataEnds = new Int32Array(n);
  const keys = new BigInt64Array(n);
  const data = new Uint8Array(dataLen);
  const sourceIds = new Map<string, number>();
  const typeIds = new Map<string, number>();
  const newSources: SourceEntry[] = [];
  const newTypes: TypeEntry[] = [];
  const spools = new Map<string, number>();
  const ips: string[] = [];
  const creds: unknown[] = [];
  let credsComplete = true;
  for (let k = 0, at = 0, bytes = 0; k < parts.length; k++) {
    const p = parts[k]!;
    const sourceMap = new Map<number, number>();
    for (const s of p.newSources) {
      const natural = JSON.stringify([s.nodeId, s.potId, s.potType]);
      let id = sourceIds.get(natural);
      if (id === undefined) {
        sourceIds.set(natural, (id = newSources.length + 1));
        newSources.push({ ...s, id });
      }
      sourceMap.set(s.id, id);
    }
    const typeMap = new Map<number, number>();
    for (const t of p.newTypes) {
      let id = typeIds.get(t.name);
      if (id === undefined) {
        typeIds.set(t.name, (id = newTypes.length + 1));
        newTypes.push({ id, name: t.name });
      }
      typeMap.set(t.id, id);
    }
    ts.set(p.ts, at);
    keys.set(p.keys, at);
    for (let i = 0; i < p.n; i++) {
      sourceId[at + i] = sourceMap.get(p.sourceId[i]!)!;
      typeId[at + i] = typeMap.get(p.typeId[i]!)!;
      dataEnds[at + i] = bytes + p.dataEnds[i]!;
    }
    data.set(new Uint8Array(p.data), bytes);
    if (p.n > 0) ips.push(p.srcIps);
    for (const [key, pos] of p.spools) spools.set(key, Math.max(spools.get(key) ?? 0, pos));
    if (p.credsComplete) {
      if (p.credCounts) creds.push(...(JSON.parse(p.credCounts) as unknown[]));
    } else credsComplete = false;
    at += p.n;
    bytes += p.data.byteLength;
  }
  return {
    n,
    ts,
    sourceId,
    typeId,
    srcIps: ips.join("\n"),
    data: data.buffer,
    dataEnds,
    credCounts: credsComplete && creds.length ? JSON.stringify(creds) : "",
    newSources,
    newTypes,
    spools: [...spools],
    keys,
    credsComplete,
  };
}
