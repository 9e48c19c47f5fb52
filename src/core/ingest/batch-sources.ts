/**
 * The distinct sources of a committed batch (src/core/registry.ts registers the unknown ones
 * as External pots). One pass over the batch's source column, marking ids in a typed array
 * rather than a Set: per event a load and a compare, the rest per distinct source.
 */
import type { Batch } from "./batch";
import type { Dictionaries } from "./dictionaries";

/**
 * A source (node, pot, kind) of a committed batch, with the newest time of its events in the
 * batch; the registry registers the pots it does not know as External.
 */
export interface PotSighting {
  /** Decimal, as the dictionary keeps it; null when the events name no node. */
  nodeId: string | null;
  potId: string | null;
  potType: string | null;
  /** Newest event time (ms) of this source in the batch. */
  newest: number;
}

export class BatchSources {
  /** Source id -> the pass that last saw it. */
  private mark = new Int32Array(1024);
  private newest = new Float64Array(1024);
  private pass = 0;
  private readonly ids: number[] = [];

  of(b: Batch, dict: Dictionaries): PotSighting[] {
    const pass = ++this.pass;
    const ids = this.ids;
    ids.length = 0;
    const { sourceId, ts } = b;
    for (let i = 0; i < b.n; i++) {
      const id = sourceId[i]!;
      if (id >= this.mark.length) this.grow(id);
      const t = ts[i]!;
      if (this.mark[id] !== pass) {
        this.mark[id] = pass;
        this.newest[id] = t;
        ids.push(id);
      } else if (t > this.newest[id]!) {
        this.newest[id] = t;
      }
    }
    const out: PotSighting[] = [];
    for (const id of ids) {
      const s = dict.source(id);
      if (s) out.push({ nodeId: s.nodeId, potId: s.potId, potType: s.potType, newest: this.newest[id]! });
    }
    return out;
  }

  private grow(id: number): void {
    const size = Math.max(this.mark.length * 2, id + 1);
    const mark = new Int32Array(size);
    mark.set(this.mark);
    const newest = new Float64Array(size);
    newest.set(this.newest);
    this.mark = mark;
    this.newest = newest;
  }
}
