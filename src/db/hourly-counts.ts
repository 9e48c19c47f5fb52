import { batchBytes, HOUR_MS, type CountKind, type EventBatch } from "./event-store";
import { hasshOf, isKexType } from "./hassh";
import { ipv4Of, ipv4Text } from "../net/ipv4";
import { Ipv4Tally } from "./ipv4-tally";

/**
 * The stats need top-N lists, and attack traffic has a long tail of addresses and passwords
 * seen once (in the bench's realistic mix nearly every event of a batch has a new address).
 * Counting every key exactly costs the writer ~1 µs per event in a map that outgrows the CPU
 * caches, plus an upsert per distinct key per flush. So each (kind, hour) keeps at most
 * TRACKED_KEYS_HIGH keys between flushes; past that, the keys seen least are dropped (those
 * seen once first) down to TRACKED_KEYS. Counts are exact for every key while fewer keys than
 * that occur in a flush interval (always, at ordinary rates); under a flood, frequent keys
 * keep (nearly) exact counts and the rarest are not counted. Event type counts are exact.
 */
const TRACKED_KEYS = 5000;
const TRACKED_KEYS_HIGH = 10_000;

function prune<K>(keys: Map<K, number>): void {
  for (let floor = 1; keys.size > TRACKED_KEYS; floor++) {
    for (const [k, n] of keys) if (n <= floor) keys.delete(k);
  }
}

export class HourlyCounts {
  readonly byKind = new Map<CountKind, Map<number, Map<string, number>>>();
  /**
   * Source addresses that are IPv4 dotted quads, by hour, as 32-bit numbers in a table of
   * typed arrays (ipv4-tally.ts): cheaper than a string sliced from a batch as a Map key
   * (measured: 0.2 µs per event less), and than a number as a Map key (0.03 less).
   */
  readonly ipv4 = new Map<number, Ipv4Tally>();

  /** The counts of one kind in one hour, to add to with `bump` in a hot loop. */
  keys(kind: CountKind, bucket: number): Map<string, number> {
    let buckets = this.byKind.get(kind);
    if (!buckets) this.byKind.set(kind, (buckets = new Map()));
    let keys = buckets.get(bucket);
    if (!keys) buckets.set(bucket, (keys = new Map()));
    return keys;
  }

  ipv4Keys(bucket: number): Ipv4Tally {
    let keys = this.ipv4.get(bucket);
    if (!keys) this.ipv4.set(bucket, (keys = new Ipv4Tally(TRACKED_KEYS, TRACKED_KEYS_HIGH)));
    return keys;
  }

  add(kind: CountKind, bucket: number, key: string, n = 1): void {
    bump(this.keys(kind, bucket), key, n, kind !== "event_type");
  }

  /**
   * Counts what a committed batch adds (its addresses split out of `b.srcIps` already): the
   * addresses and event types here, the credentials as the receiving thread counted them.
   */
  countBatch(b: EventBatch, ips: string[], typeName: (id: number) => string): void {
    // Buckets rarely change within a batch; the per-kind maps are looked up once per bucket.
    let bucket = -1;
    let ipKeys: Map<string, number> | null = null;
    let v4Keys: Ipv4Tally | null = null;
    const typeCounts = new Map<number, Map<number, number>>();
    let typeKeys: Map<number, number> | null = null;
    for (let i = 0; i < b.n; i++) {
      const h = Math.floor(b.ts[i]! / HOUR_MS);
      if (h !== bucket) {
        bucket = h;
        ipKeys = this.keys("src_ip", h);
        v4Keys = this.ipv4Keys(h);
        typeKeys = typeCounts.get(h) ?? null;
        if (!typeKeys) typeCounts.set(h, (typeKeys = new Map()));
      }
      const ip = ips[i];
      if (ip) {
        const v4 = ipv4Of(ip);
        if (v4 >= 0) v4Keys!.add(v4, 1);
        else bump(ipKeys!, ip, 1, true);
      }
      const t = b.typeId[i]!;
      typeKeys!.set(t, (typeKeys!.get(t) ?? 0) + 1);
    }
    let kexTypes: Set<number> | null = null;
    for (const [h, types] of typeCounts) {
      for (const [t, n] of types) {
        const name = typeName(t);
        this.add("event_type", h, name, n);
        if (isKexType(name)) (kexTypes ??= new Set()).add(t);
      }
    }
    if (b.credCounts) for (const [kind, h, counts] of JSON.parse(b.credCounts) as [CountKind, number, [string, number][]][]) for (const [key, n] of counts) this.add(kind, h, key, n);
    if (kexTypes !== null) this.countHassh(b, kexTypes);
  }

  /** The HASSH of each key exchange event of a batch: only those events' data is read (hassh.ts). */
  private countHassh(b: EventBatch, kexTypes: Set<number>): void {
    const bytes = batchBytes(b);
    for (let i = 0, from = 0; i < b.n; i++) {
      const to = b.dataEnds[i]!;
      if (kexTypes.has(b.typeId[i]!)) {
        const hassh = hasshOf(bytes.toString("utf8", from, to));
        if (hassh !== null) this.add("hassh", Math.floor(b.ts[i]! / HOUR_MS), hassh);
      }
      from = to;
    }
  }

  /** Every count: kind, hour bucket, key, count. */
  *entries(): Generator<[CountKind, number, string, number]> {
    for (const [kind, buckets] of this.byKind) for (const [bucket, keys] of buckets) for (const [key, count] of keys) yield [kind, bucket, key, count];
    for (const [bucket, keys] of this.ipv4) for (const [v4, count] of keys) yield ["src_ip", bucket, ipv4Text(v4), count];
  }

  get empty(): boolean {
    return this.byKind.size === 0 && this.ipv4.size === 0;
  }

  clear(): void {
    this.byKind.clear();
    this.ipv4.clear();
  }
}

function bump<K>(keys: Map<K, number>, key: K, n: number, bounded: boolean): void {
  const before = keys.get(key);
  if (before !== undefined) keys.set(key, before + n);
  else {
    keys.set(key, n);
    if (bounded && keys.size > TRACKED_KEYS_HIGH) prune(keys);
  }
}
