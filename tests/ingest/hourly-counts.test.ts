import { expect, test } from "bun:test";
import { HourlyCounts, bump } from "../../src/db/hourly-counts";

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
    if (kind === "src_ip") for (const k of order) bump(c.ipv4Keys(HOUR), k as number, 1, true);
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
