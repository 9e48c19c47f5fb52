/**
 * An event record (EventRecord, normalise.ts) as JSON text, written from its columns and its
 * data as stored: REST's event pages and the live feed's frames. The same text as `stringify`
 * of the record, without building the record or running the exact-u64 replacer over every
 * value, which was most of the cost (measured for a Cowrie login event: record + stringify
 * ~4-6 µs, this ~1 µs; for a page of 100 see docs/benchmarks.md, REST).
 */
import type { Geo } from "../../geo";
import { parseWithIds, stringify } from "../../protocol/json";

export interface RecordColumns {
  id: number;
  /** The node id as decimal text (an exact u64). */
  nodeId: string | null;
  potId: string | null;
  potType: string | null;
  eventType: string;
  /** ISO 8601, as `toISOString` writes it. */
  timestamp: string;
  srcIp: string | null;
}

const str = (v: string | null) => (v === null ? "null" : JSON.stringify(v));

/**
 * Stored data as readers see it: parsed and written again, not copied. Stored as the honeypot
 * sent it, it may hold spaces, escapes or a repeated key that the API never shows. Exact u64
 * node ids nested in data need the exact parser and writer; everything else the native ones.
 */
export function dataJson(stored: string): string {
  return stored.includes('"node_id"') ? stringify(parseWithIds(stored)) : JSON.stringify(JSON.parse(stored));
}

/** The record's text; `geo` as the reader adds it (only when the data knows the address). */
export function recordJson(c: RecordColumns, data: string, geo: Geo | undefined): string {
  return (
    `{"id":${c.id},"node_id":${c.nodeId ?? "null"},"pot_id":${str(c.potId)},"pot_type":${str(c.potType)},"event_type":${JSON.stringify(c.eventType)},` +
    `"timestamp":"${c.timestamp}","src_ip":${str(c.srcIp)},"data":${data}${geo ? `,"geo":${JSON.stringify(geo)}` : ""}}`
  );
}
