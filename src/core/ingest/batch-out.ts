/**
 * What a committed batch shows outside Core: the event log's lines, the live feed's frames
 * and the metrics' counts per event type, written from the batch's columns and data bytes
 * (the buffer is back from the writer by then), without an object per event.
 */
import type { Geo } from "../../geo";
import type { EventLogger } from "../../log";
import { isoTime } from "../../protocol/time";
import type { SourceEntry } from "../../db/event-store";
import type { MessageBus } from "../bus";
import type { Batch } from "./batch";
import type { Dictionaries } from "./dictionaries";
import { dataJson, recordJson, type RecordColumns } from "./record-json";

/** Calls `each` with every event of a committed batch: its source, type, time, address and data bytes' range. */
function eachEvent(b: Batch, dict: Dictionaries, each: (i: number, source: SourceEntry, eventType: string, timestamp: string, srcIp: string | null, from: number, to: number) => void): void {
  for (let i = 0, from = 0; i < b.n; i++) {
    const to = b.dataEnds[i]!;
    each(i, dict.source(b.sourceId[i]!)!, dict.typeName(b.typeId[i]!)!, isoTime(b.ts[i]!), b.ips[i] || null, from, to);
    from = to;
  }
}

/** One log line per committed event. */
export function logBatch(b: Batch, firstId: number | null, dict: Dictionaries, line: EventLogger): void {
  const fields = { id: 0 as number | null, node_id: null as string | null, pot_id: null as string | null, pot_type: null as string | null, event_type: "", timestamp: "", src_ip: null as string | null };
  eachEvent(b, dict, (i, source, eventType, timestamp, srcIp, from, to) => {
    fields.id = firstId === null ? null : firstId + i;
    fields.node_id = source.nodeId;
    fields.pot_id = source.potId;
    fields.pot_type = source.potType;
    fields.event_type = eventType;
    fields.timestamp = timestamp;
    fields.src_ip = srcIp;
    line(fields, b.dataBuf, from, to, b.escape);
  });
}

const FRAME_HEAD = '{"version":2,"message":{"PotEvent":';
const FRAME_TAIL = "}}";

/**
 * Every event of a committed batch as a PotEvent message on the bus, given as its feed frame
 * (BusMessage.frame): a subscriber gets every event committed after it subscribed. The node
 * ids of the feed's filters are bigints: made once per source of the batch.
 */
export function publishBatch(b: Batch, firstId: number, dict: Dictionaries, bus: MessageBus, enrich?: (ip: string) => Geo | undefined): void {
  const nodeIds = new Map<string, bigint>();
  eachEvent(b, dict, (i, source, eventType, timestamp, srcIp, from, to) => {
    let nodeId: bigint | null = null;
    if (source.nodeId !== null) {
      nodeId = nodeIds.get(source.nodeId) ?? null;
      if (nodeId === null) nodeIds.set(source.nodeId, (nodeId = BigInt(source.nodeId)));
    }
    const c: RecordColumns = { id: firstId + i, nodeId: source.nodeId, potId: source.potId, potType: source.potType, eventType, timestamp, srcIp };
    const data = dataJson(b.dataBuf.toString("utf8", from, to));
    const frame = FRAME_HEAD + recordJson(c, data, srcIp !== null && enrich ? enrich(srcIp) : undefined) + FRAME_TAIL;
    bus.publishFrame("PotEvent", frame, { node_id: nodeId, pot_id: source.potId, event_type: eventType });
  });
}

/** A batch's events per event type (a pass over its type ids: a few ns per event). */
export function typeCounts(b: Batch, dict: Dictionaries): Map<string, number> {
  const byId = new Map<number, number>();
  for (let i = 0; i < b.n; i++) {
    const t = b.typeId[i]!;
    byId.set(t, (byId.get(t) ?? 0) + 1);
  }
  const out = new Map<string, number>();
  for (const [t, n] of byId) out.set(dict.typeName(t) ?? String(t), n);
  return out;
}
