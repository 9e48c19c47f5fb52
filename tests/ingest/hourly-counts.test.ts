import { expect, test } from "bun:test";
import { HourlyCounts } from "../../src/db/hourly-counts";
import { Ipv4Tally } from "../../src/db/ipv4-tally";

const HOUR = 498_728;

/** A reproducible shuffle. */
function shuffled<T>(items: T[], seed: number): T[] {
  let s = seed;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function counted<K>(c: HourlyCounts, kind: "username"): Map<K, number> {
  const out = new Map<K, number>();
  for (const [k, bucket, key, n] of c.entries()) if (k === kind && bucket === HOUR) out.set(key as K, n);
  return out;
}

test("counts are exact while fewer keys than the tracked ones occur between flushes", () => {
  const c = new HourlyCounts();
  const seen: string[] = [];
  // 4999 usernames, key i seen (i % 7) + 1 times, in shuffled order.
  for (let i = 0; i < 4999; i++) for (let k = 0; k <= i % 7; k++) seen.push(`user${i}`);
  for (const u of shuffled(seen, 3)) c.add("username", HOUR, u);
  const got = counted<string>(c, "username");
  expect(got.size).toBe(4999);
  for (let i = 0; i < 4999; i++) expect(got.get(`user${i}`)).toBe((i % 7) + 1);
});

test("under a flood of keys seen once, frequent keys keep exact counts, and no count is more than the real one", () => {
  for (const kind of ["src_ip", "username"] as const) {
    const c = new HourlyCounts();
    const truth = new Map<number | string, number>();
    const events: (number | string)[] = [];
    // 200 frequent keys 300 times each, among 200,000 keys seen once (a new address per event).
    const keyOf = (i: number) => (kind === "src_ip" ? 0x0a000000 + i : `k${i}`);
    for (let f = 0; f < 200; f++) for (let k = 0; k < 300; k++) events.push(keyOf(f));
    for (let i = 0; i < 200_000; i++) events.push(keyOf(1000 + i));
    const order = shuffled(events, 11);
    // Frequent keys show up from the start (before the flood), as a flood's frequent keys do.
    for (let f = 0; f < 200; f++) order.unshift(keyOf(f));
    for (const k of order) truth.set(k, (truth.get(k) ?? 0) + 1);
    // As the writer counts them: addresses by number, other keys by text.
    if (kind === "src_ip") for (const k of order) c.ipv4Keys(HOUR).add(k as number, 1);
    else for (const k of order) c.add(kind, HOUR, k as string);
    const got = new Map<number | string, number>(kind === "src_ip" ? c.ipv4Keys(HOUR) : c.keys(kind, HOUR));
    expect(got.size).toBeLessThanOrEqual(10_000);
    for (let f = 0; f < 200; f++) expect([kind, f, got.get(keyOf(f))]).toEqual([kind, f, truth.get(keyOf(f))]);
    for (const [k, n] of got) expect(n).toBeLessThanOrEqual(truth.get(k)!);
  }
});

test("during a flood, a key counted now is counted exactly until a prune drops it (the least seen first)", () => {
  const c = new HourlyCounts();
  // 10,001 keys seen once were all dropped at the first prune; 8,999 more since.
  for (let i = 0; i < 19_000; i++) c.add("password", HOUR, `p${i}`);
  c.add("password", HOUR, "summed", 5);
  c.add("password", HOUR, "once", 1);
  const got = new Map<string, number>();
  for (const [kind, , key, n] of c.entries()) if (kind === "password") got.set(key, n);
  expect(got.get("summed")).toBe(5);
  expect(got.get("once")).toBe(1);
  expect(got.size).toBeLessThanOrEqual(10_000);
});

test("the IPv4 table counts as a Map does, the whole address range included, while no prune is due", () => {
  let s = 5;
  const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const t = new Ipv4Tally(5000, 10_000);
  const truth = new Map<number, number>();
  // Edges of the range (0.0.0.0, 255.255.255.255, around 2^31), then addresses that collide in
  // the table's low bits (one /16 apart), then random ones, some many times; n > 1 too.
  const keys = [0, 2 ** 32 - 1, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1];
  for (let i = 0; i < 300; i++) keys.push(0x0a000000 + i * 65536);
  for (let i = 0; i < 9000; i++) keys.push(Math.floor(rnd() * 2 ** 32));
  for (let r = 0; r < 30_000; r++) {
    const k = keys[Math.floor(rnd() ** 2 * keys.length)]!;
    const n = 1 + (r % 3);
    t.add(k, n);
    truth.set(k, (truth.get(k) ?? 0) + n);
  }
  expect(truth.size).toBeLessThanOrEqual(10_000);
  expect(t.size).toBe(truth.size);
  const got = new Map(t);
  expect(got).toEqual(truth);
  for (const k of keys.slice(0, 5)) expect(got.get(k) ?? 0).toBe(truth.get(k) ?? 0);
  expect(got.get(0x7f000001) ?? 0).toBe(truth.get(0x7f000001) ?? 0);
});

test("the IPv4 table prunes as the Map does: past the high mark, the keys seen least go first, down to the low mark", () => {
  const t = new Ipv4Tally(5000, 10_000);
  for (let i = 0; i < 3000; i++) t.add(i, 3);
  for (let i = 3000; i < 6000; i++) t.add(i, 2);
  for (let i = 6000; i < 10_000; i++) t.add(i, 1);
  expect(t.size).toBe(10_000);
  // The 10,001st key: those seen once go (4,001 with it), then twice (3,000), leaving 3,000.
  t.add(10_000, 1);
  expect(t.size).toBe(3000);
  expect([...t].every(([k, n]) => k < 3000 && n === 3)).toBe(true);
  // Still a working table after the rebuild.
  t.add(7, 1);
  t.add(20_000, 4);
  const after = new Map(t);
  expect([after.get(7), after.get(20_000), after.get(6000) ?? 0, t.size]).toEqual([4, 4, 0, 3001]);
});
