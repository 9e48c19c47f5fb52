/**
 * What is installed on this node and whether each pot should run: `DATA/pots.json`, rewritten
 * atomically on every change. This file is what makes a node restart safe: on start the node
 * reports every pot in it and starts those whose `desired` is "running".
 */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config";
import { StringMap } from "../protocol/types";
import { writeFileAtomic } from "./identity";

export const PotRecord = Type.Object({
  pot_id: Type.String(),
  /** Canonical kind (the manifest name). */
  pot_type: Type.String(),
  /** The InstallPot config as sent (defaults are re-applied from the manifest at each start). */
  config: StringMap,
  /** "installing" while an install is under way: found at start, it means the install was cut off. */
  phase: Type.Union([Type.Literal("installing"), Type.Literal("installed")]),
  desired: Type.Union([Type.Literal("running"), Type.Literal("stopped")]),
  source: Type.String(),
  installed_at: Type.String(),
  /** Process group of the running honeypot, to find it again if the node died without stopping it. */
  pid: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
});
export type PotRecord = Static<typeof PotRecord>;

const StoreFile = Type.Object({ pots: Type.Array(PotRecord) });

export class PotStore {
  private pots = new Map<string, PotRecord>();
  private readonly file: string;

  constructor(dataDir: string) {
    this.file = join(dataDir, "pots.json");
    if (!existsSync(this.file)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.file, "utf8"));
    } catch (e) {
      throw new ConfigError(`${this.file} is not valid JSON (${(e as Error).message}); restore it from a backup or remove it to forget the installed pots`);
    }
    if (!Value.Check(StoreFile, parsed)) throw new ConfigError(`${this.file} does not have the expected shape; restore it or remove it`);
    for (const p of parsed.pots) this.pots.set(p.pot_id, p);
  }

  get(potId: string): PotRecord | null {
    return this.pots.get(potId) ?? null;
  }

  list(): PotRecord[] {
    return [...this.pots.values()];
  }

  put(record: PotRecord): void {
    this.pots.set(record.pot_id, record);
    this.save();
  }

  update(potId: string, change: Partial<PotRecord>): PotRecord | null {
    const r = this.pots.get(potId);
    if (!r) return null;
    const next = { ...r, ...change };
    this.pots.set(potId, next);
    this.save();
    return next;
  }

  remove(potId: string): void {
    if (this.pots.delete(potId)) this.save();
  }

  private save(): void {
    writeFileAtomic(this.file, JSON.stringify({ pots: this.list() }, null, 2) + "\n");
  }
}
