/**
 * The keyspace a client of the honeypot sees: string values in 16 numbered databases, with
 * expiry, bounded by bytes (keys and values) and by number of keys. Past either bound a write is
 * refused, and the command answers as a Redis at its `maxmemory` with `noeviction` does (OOM).
 * Keys are Latin-1 strings, one character per byte, so any byte string is a key.
 */
import { globMatch } from "./glob.ts";

export interface KeyspaceLimits {
  maxBytes: number;
  maxKeys: number;
}

export interface Entry {
  value: Buffer;
  /** Unix time in ms; null: no expiry. */
  expiresAt: number | null;
}

export const DATABASES = 16;

export class Keyspace {
  private readonly dbs = new Map<number, Map<string, Entry>>();
  private usedBytes = 0;
  private usedKeys = 0;

  constructor(
    private readonly limits: KeyspaceLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get bytes(): number {
    return this.usedBytes;
  }

  get keyCount(): number {
    return this.usedKeys;
  }

  private db(index: number): Map<string, Entry> {
    let db = this.dbs.get(index);
    if (!db) this.dbs.set(index, (db = new Map()));
    return db;
  }

  private expired(entry: Entry): boolean {
    return entry.expiresAt !== null && entry.expiresAt <= this.now();
  }

  private remove(db: Map<string, Entry>, key: string, entry: Entry): void {
    db.delete(key);
    this.usedBytes -= key.length + entry.value.length;
    this.usedKeys--;
  }

  /** The live entry of a key; an expired one is removed on the way, as Redis expires lazily. */
  get(db: number, key: string): Entry | undefined {
    const map = this.dbs.get(db);
    const entry = map?.get(key);
    if (!map || !entry) return undefined;
    if (this.expired(entry)) {
      this.remove(map, key, entry);
      return undefined;
    }
    return entry;
  }

  /** Whether `value` under `key` would fit the bounds (replacing what the key holds). */
  fits(db: number, key: string, value: number): boolean {
    const old = this.get(db, key);
    const bytes = this.usedBytes - (old ? key.length + old.value.length : 0) + key.length + value;
    return bytes <= this.limits.maxBytes && this.usedKeys + (old ? 0 : 1) <= this.limits.maxKeys;
  }

  /** Stores a value; false (nothing changed) when it would pass a bound. `keepTtl` keeps the old expiry. */
  set(db: number, key: string, value: Buffer, expiresAt: number | null, keepTtl = false): boolean {
    if (!this.fits(db, key, value.length)) return false;
    const map = this.db(db);
    const old = this.get(db, key);
    if (old) this.remove(map, key, old);
    map.set(key, { value, expiresAt: keepTtl && old ? old.expiresAt : expiresAt });
    this.usedBytes += key.length + value.length;
    this.usedKeys++;
    return true;
  }

  delete(db: number, key: string): boolean {
    const entry = this.get(db, key);
    if (!entry) return false;
    this.remove(this.dbs.get(db)!, key, entry);
    return true;
  }

  /** Sets or clears a key's expiry; a time already past deletes the key. False: no such key. */
  expire(db: number, key: string, expiresAt: number | null): boolean {
    const entry = this.get(db, key);
    if (!entry) return false;
    if (expiresAt !== null && expiresAt <= this.now()) this.delete(db, key);
    else entry.expiresAt = expiresAt;
    return true;
  }

  /** Live keys of a database that match a glob pattern, in the order they were set. */
  keys(db: number, pattern = "*"): string[] {
    const map = this.dbs.get(db);
    if (!map) return [];
    const out: string[] = [];
    for (const [key, entry] of [...map]) {
      if (this.expired(entry)) this.remove(map, key, entry);
      else if (pattern === "*" || globMatch(pattern, key)) out.push(key);
    }
    return out;
  }

  size(db: number): number {
    return this.keys(db).length;
  }

  /** Empties one database, or all of them. */
  flush(db?: number): void {
    for (const index of db === undefined ? [...this.dbs.keys()] : [db]) {
      const map = this.dbs.get(index);
      if (!map) continue;
      for (const [key, entry] of [...map]) this.remove(map, key, entry);
      this.dbs.delete(index);
    }
  }

  /** Databases holding keys, for INFO's keyspace section: keys, and how many of them expire. */
  summary(): Array<{ db: number; keys: number; expires: number }> {
    const out: Array<{ db: number; keys: number; expires: number }> = [];
    for (const index of [...this.dbs.keys()].sort((a, b) => a - b)) {
      const keys = this.keys(index);
      if (keys.length === 0) continue;
      const expires = keys.filter((k) => this.dbs.get(index)!.get(k)!.expiresAt !== null).length;
      out.push({ db: index, keys: keys.length, expires });
    }
    return out;
  }

  /** Every live value, database by database in the order set: what an RDB file would hold. */
  values(): Buffer[] {
    const out: Buffer[] = [];
    for (const index of [...this.dbs.keys()].sort((a, b) => a - b)) {
      for (const key of this.keys(index)) out.push(this.dbs.get(index)!.get(key)!.value);
    }
    return out;
  }
}
