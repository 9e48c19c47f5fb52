/**
 * The distinct sources of a committed batch (src/core/registry.ts registers the unknown ones
 * as External pots). One pass over the batch's source column, marking ids in a typed array
 * rather than a Set and skipping runs of one source (a connection mostly carries one pot): per
 * event a load and a compare, the rest per distinct source, with nothing allocated but the list.
 */
import type { Batch } from "./batch";
import type { Dictionaries } from "./dictionaries";

/** A source (node, pot, kind) of a committed batch, as the dictionary has it. */
export interface PotSighting {
  readonly sourceId: number;
  /** Decimal; null when the events name no node. */
  readonly nodeId: string | null;
  readonly potId: string | null;
  readonly potType: string | null;
}

export class BatchSources {
  /** Source id -> the pass that last saw it. */
  private mark = new Int32Array(1024);
  private pass = 0;
  /** One sighting per source id, made once: a source never changes. */
  private readonly made: PotSighting[] = [];

  of(b: Batch, dict: Dictionaries): PotSighting[] {
    const pass = ++this.pass;
    const { sourceId, n } = b;
    const out: PotSighting[] = [];
    let last = -1;
    for (let i = 0; i < n; i++) {
      const id = sourceId[i]!;
      if (id === last) continue;
      last = id;
      if (id >= this.mark.length) this.grow(id);
      if (this.mark[id] === pass) continue;
      this.mark[id] = pass;
      const s = this.made[id] ?? this.make(id, dict);
      if (s) out.push(s);
    }
    return out;
  }

  private make(id: number, dict: Dictionaries): PotSighting | undefined {
    const s = dict.source(id);
    if (s) this.made[id] = { sourceId: id, nodeId: s.nodeId, potId: s.potId, potType: s.potType };
    return this.made[id];
  }

  private grow(id: number): void {
    const mark = new Int32Array(Math.max(this.mark.length * 2, id + 1));
    mark.set(this.mark);
    this.mark = mark;
  }
}

/** Newest event time (ms) of one source in a batch: another pass, for the rare pot that needs it. */
export function newestOf(b: Batch, sourceId: number): number {
  let t = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < b.n; i++) if (b.sourceId[i] === sourceId && b.ts[i]! > t) t = b.ts[i]!;
  return t;
}
