/**
 * The pipeline's dictionaries: each event's source (node, pot, pot type) and event type as a
 * small number for the batch's columns, new entries going to the writer with the batch that
 * first uses them; and back, for log lines.
 */
import type { SourceEntry, TypeEntry } from "../../db/event-store";
import type { IngestEvent } from "./normalise";

/** A source of the dictionary with its node id as a BigInt, for comparing with events' `node_id`. */
interface SourceEntryOf {
  nodeId: bigint | null;
  potId: string | null;
  potType: string | null;
  id: number;
}

export class Dictionaries {
  /**
   * Source ids by pot id, then the few (node, pot type) pairs of that pot id, compared with
   * `===`. A Map keyed by the node id was 8% of the receiving thread's time (measured): a u64
   * node id is a heap BigInt, a slow Map key, while a pot id string hashes once.
   */
  private readonly sourceIds = new Map<string, SourceEntryOf[]>();
  private readonly typeIds = new Map<string, number>();
  /** The dictionaries the other way round, for log lines: id → source, id → event type. */
  private readonly sourceById: SourceEntry[] = [];
  private readonly typeById: string[] = [];
  private nextSourceId = 1;
  private nextTypeId = 1;

  /** Starts from the entries stored by earlier runs. */
  constructor(stored: { sources: SourceEntry[]; types: TypeEntry[] }) {
    for (const s of stored.sources) {
      this.sourcesOfPot(s.potId).push({ nodeId: s.nodeId === null ? null : BigInt(s.nodeId), potId: s.potId, potType: s.potType, id: s.id });
      this.sourceById[s.id] = s;
      this.nextSourceId = Math.max(this.nextSourceId, s.id + 1);
    }
    for (const t of stored.types) {
      this.typeIds.set(t.name, t.id);
      this.typeById[t.id] = t.name;
      this.nextTypeId = Math.max(this.nextTypeId, t.id + 1);
    }
  }

  /** The event's source id; a new one is also pushed on `added`. */
  sourceIdOf(ev: IngestEvent, added: SourceEntry[]): number {
    const list = this.sourcesOfPot(ev.pot_id);
    for (const e of list) if (e.nodeId === ev.node_id && e.potId === ev.pot_id && e.potType === ev.pot_type) return e.id;
    const id = this.nextSourceId++;
    list.push({ nodeId: ev.node_id, potId: ev.pot_id, potType: ev.pot_type, id });
    const source = { id, nodeId: ev.node_id === null ? null : ev.node_id.toString(), potId: ev.pot_id, potType: ev.pot_type };
    this.sourceById[id] = source;
    added.push(source);
    return id;
  }

  /** The event type's id; a new one is also pushed on `added`. */
  typeIdOf(name: string, added: TypeEntry[]): number {
    let id = this.typeIds.get(name);
    if (id === undefined) {
      id = this.nextTypeId++;
      this.typeIds.set(name, id);
      this.typeById[id] = name;
      added.push({ id, name });
    }
    return id;
  }

  source(id: number): SourceEntry | undefined {
    return this.sourceById[id];
  }

  typeName(id: number): string | undefined {
    return this.typeById[id];
  }

  private sourcesOfPot(potId: string | null): SourceEntryOf[] {
    // A null pot id shares its list with "" (entries compare the pot id too).
    const key = potId ?? "";
    let list = this.sourceIds.get(key);
    if (!list) this.sourceIds.set(key, (list = []));
    return list;
  }
}
