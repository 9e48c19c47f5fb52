/**
 * What a batch of events adds to the segment summaries, worked out without a database, for
 * every backend: per segment of SEG_SIZE ids (event-store.ts) its time range, its count, the
 * Bloom filter of its source addresses (bloom.ts), and the segment keys (the event types and
 * sources in it) not written before. The SQLite writer (event-writer.ts) and both PostgreSQL
 * writers (pg/event-writer.ts) write these rows into event_segments and event_segment_keys;
 * queries prune segments by them (event-queries.ts).
 */
import { BLOOM_BYTES, bloomAdd } from "./bloom";
import { SEG_SIZE } from "./event-store";

/** One segment's summary as a batch adds to it (the backend adds count and range to what it stored). */
export interface SegmentDelta {
  seg: number;
  minTs: number;
  maxTs: number;
  count: number;
  /** The segment's whole filter (what was stored and this batch's addresses): the backend replaces the stored one. */
  bloom: Uint8Array;
  types: Set<number>;
  sources: Set<number>;
}

export type SegmentKeyKind = "type" | "source";

/** Segment keys to insert, as columns; `names` are what `committed` remembers. */
export interface SegmentKeys {
  names: string[];
  kinds: SegmentKeyKind[];
  values: number[];
  segs: number[];
}

/** Keys remembered as written; past this they are forgotten (a redundant insert that does nothing). */
const WRITTEN_MAX = 10_000;

/**
 * One writer's summaries: it keeps the newest segment's filter whole in memory (rewritten
 * with each batch) and the keys it wrote, so each batch inserts only new ones.
 */
export class SegmentSummaries {
  private bloom: { seg: number; bits: Uint8Array } | null = null;
  private readonly written = new Set<string>();

  /** The stored filter of a segment (at start, or after another writer of a cluster wrote to it); null: none stored. */
  useBloom(seg: number, bits: Uint8Array | null): void {
    this.bloom = bits ? { seg, bits } : null;
  }

  /**
   * The summaries of `n` events whose ids run from `firstId`, in segment order. Addresses are
   * added to the kept filter at once: a batch that does not commit may leave bits in it, a
   * false positive, which is harmless.
   */
  summarize(n: number, firstId: number, ts: ArrayLike<number>, typeIds: ArrayLike<number>, sourceIds: ArrayLike<number>, ips: readonly string[]): SegmentDelta[] {
    const segs: SegmentDelta[] = [];
    let cur: SegmentDelta | null = null;
    for (let i = 0, id = firstId; i < n; i++, id++) {
      const t = ts[i]!;
      const seg = Math.floor(id / SEG_SIZE);
      if (cur === null || cur.seg !== seg) segs.push((cur = { seg, minTs: t, maxTs: t, count: 0, bloom: this.bloomOf(seg), types: new Set(), sources: new Set() }));
      if (t < cur.minTs) cur.minTs = t;
      if (t > cur.maxTs) cur.maxTs = t;
      cur.count++;
      cur.types.add(typeIds[i]!);
      cur.sources.add(sourceIds[i]!);
      const ip = ips[i];
      if (ip) bloomAdd(cur.bloom, ip);
    }
    return segs;
  }

  /** The keys of these summaries not written yet. */
  newKeys(segs: readonly SegmentDelta[]): SegmentKeys {
    const keys: SegmentKeys = { names: [], kinds: [], values: [], segs: [] };
    for (const s of segs) {
      this.add(keys, s.seg, "type", s.types);
      this.add(keys, s.seg, "source", s.sources);
    }
    return keys;
  }

  /** Once the keys' batch committed: they are written (only then: a rolled-back batch's are not). */
  committed(keys: SegmentKeys): void {
    if (this.written.size > WRITTEN_MAX) this.written.clear();
    for (const k of keys.names) this.written.add(k);
  }

  /** Retention deleted keys: none counts as written any more. */
  forgetKeys(): void {
    this.written.clear();
  }

  private add(keys: SegmentKeys, seg: number, kind: SegmentKeyKind, values: Set<number>): void {
    for (const value of values) {
      const name = `${seg}/${kind}/${value}`;
      if (this.written.has(name)) continue;
      keys.names.push(name);
      keys.kinds.push(kind);
      keys.values.push(value);
      keys.segs.push(seg);
    }
  }

  private bloomOf(seg: number): Uint8Array {
    if (this.bloom?.seg !== seg) this.bloom = { seg, bits: new Uint8Array(BLOOM_BYTES) };
    return this.bloom.bits;
  }
}
