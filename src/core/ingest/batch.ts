/**
 * A batch of the pipeline as it fills: columns (time, source, type, address), the events'
 * data bytes one after another, credential counts, the streams to acknowledge; and how it goes
 * to the writer (`toWire`, the EventBatch of src/db/event-store.ts).
 */
import { HOUR_MS, type EventBatch, type SourceEntry, type TypeEntry } from "../../db/event-store";
import type { StreamTag } from "./types";

/**
 * A batch's columns and data buffer, used again by a later batch once this one is committed:
 * fresh multi-megabyte buffers cost more than filling them (page faults and zeroing; the
 * growth copies and the copy for the writer were 10% of the receiving thread, measured).
 */
export interface Storage {
  ts: Float64Array;
  sourceId: Int32Array;
  typeId: Int32Array;
  /** The events' data, UTF-8 JSON one after another; event i ends at `dataEnds[i]`. Owns its whole ArrayBuffer (it moves to the writer's thread and back). */
  dataBuf: Buffer;
  dataEnds: Int32Array;
  /** Each event's idempotency key (sender-keys.ts), only when the writer asks for them (a cluster's ingest). */
  keys: BigInt64Array | null;
  /** The same keys as 32-bit words, as `SenderKeys` writes them. */
  keyWords: Uint32Array | null;
}

export interface Batch extends Storage {
  /** When its first event arrived (performance.now()): receive-to-commit lag for the metrics. */
  startedAt: number;
  seq: number;
  attempts: number;
  n: number;
  ips: string[];
  dataLen: number;
  /** Hour → username/password → count. */
  users: HourCounts;
  passwords: HourCounts;
  newSources: SourceEntry[];
  newTypes: TypeEntry[];
  /** Streams in this batch → their line count when it was sealed. */
  tags: Map<StreamTag, number>;
  /** Some event's data may hold a control character: its log lines are escaped. */
  escape: boolean;
}

/** Hour → key → count, remembering the last hour's map: a batch's events rarely change hour. */
export class HourCounts {
  readonly byHour = new Map<number, Map<string, number>>();
  // An integer, like every hour after it: a NaN here made the JIT's code for `count`, which
  // expects integers, bail out once per batch (a batch starts a new instance).
  private lastHour = -1;
  private last: Map<string, number> | null = null;

  count(ts: number, key: string): void {
    const h = Math.floor(ts / HOUR_MS);
    let m = this.last;
    if (h !== this.lastHour || m === null) {
      m = this.byHour.get(h) ?? null;
      if (m === null) this.byHour.set(h, (m = new Map()));
      this.lastHour = h;
      this.last = m;
    }
    m.set(key, (m.get(key) ?? 0) + 1);
  }
}

/** A new batch of `size` events, on the storage of a committed one when there is one; `keyed`: with a key column. */
export function newBatch(size: number, dataHint: number, spare: Storage | undefined, keyed = false): Batch {
  const keys = spare?.keys ?? (keyed ? new BigInt64Array(size) : null);
  return {
    startedAt: performance.now(),
    seq: 0,
    attempts: 0,
    n: 0,
    ts: spare?.ts ?? new Float64Array(size),
    sourceId: spare?.sourceId ?? new Int32Array(size),
    typeId: spare?.typeId ?? new Int32Array(size),
    ips: [],
    dataBuf: spare?.dataBuf ?? Buffer.allocUnsafeSlow(dataHint),
    dataLen: 0,
    dataEnds: spare?.dataEnds ?? new Int32Array(size),
    keys,
    keyWords: keys && new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2),
    users: new HourCounts(),
    passwords: new HourCounts(),
    newSources: [],
    newTypes: [],
    tags: new Map(),
    escape: false,
  };
}

/** What of a committed batch a later one can use again. */
export function storageOf(b: Batch): Storage {
  return { ts: b.ts, sourceId: b.sourceId, typeId: b.typeId, dataBuf: b.dataBuf, dataEnds: b.dataEnds, keys: b.keys, keyWords: b.keyWords };
}

/** Makes room for `bytes` more bytes of data in the batch. */
export function reserve(b: Batch, bytes: number): void {
  if (b.dataLen + bytes <= b.dataBuf.length) return;
  const grown = Buffer.allocUnsafeSlow(Math.max(b.dataBuf.length * 2, b.dataLen + bytes));
  b.dataBuf.copy(grown, 0, 0, b.dataLen);
  b.dataBuf = grown;
}

export function toWire(b: Batch): EventBatch {
  return {
    n: b.n,
    // The whole buffer, no copy: the events' bytes end at dataEnds[n - 1].
    data: b.dataBuf.buffer as ArrayBuffer,
    dataEnds: b.dataEnds.subarray(0, b.n),
    ts: b.ts.subarray(0, b.n),
    sourceId: b.sourceId.subarray(0, b.n),
    typeId: b.typeId.subarray(0, b.n),
    srcIps: b.ips.join("\n"),
    credCounts:
      b.users.byHour.size + b.passwords.byHour.size === 0
        ? ""
        : JSON.stringify([
            ...Array.from(b.users.byHour, ([h, m]) => ["username", h, [...m]]),
            ...Array.from(b.passwords.byHour, ([h, m]) => ["password", h, [...m]]),
          ]),
    newSources: b.newSources,
    newTypes: b.newTypes,
    spools: spoolPositions(b),
    ...(b.keys && { keys: b.keys.subarray(0, b.n) }),
  };
}

/** The spool position each node stream of a batch reaches (its last line in the batch). */
export function spoolPositions(b: Batch): [string, number][] {
  const out: [string, number][] = [];
  for (const [tag, line] of b.tags) if (tag.spool) out.push([tag.spool.key, tag.spool.first + line]);
  return out;
}
