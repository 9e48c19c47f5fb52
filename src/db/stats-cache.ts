/**
 * The stats' top lists sum a window's counters per key: at tens of thousands of source
 * addresses an hour, a 24 h window is ~400,000 rows to group, ~100 ms each time. Nearly all of
 * them are hours that no longer change, so their sums are kept (`BaseSums`) and each request
 * adds only the newest hours (the "hot" ones) to them, exactly:
 *
 * - a key the hot hours do not hold keeps its base sum, so the first `top` such keys of the
 *   base (already sorted) are the only ones of them that can make the list;
 * - every key the hot hours hold gets base + hot.
 *
 * Whether the base hours changed (a late event, retention) is told by their event_type totals:
 * every counted event adds one to its hour's event_type counters, in the same transaction as
 * its other counters, and retention deletes whole hours. See `EventQueries.stats`.
 */
import type { TopEntry } from "./read-limits";

export interface BaseSums {
  /** What the base was summed from: window start, daily range, first hot hour, base hours' event_type totals. */
  key: string;
  sums: Map<string, number>;
  /** Every key of `sums`, most frequent first, ties by key in SQLite's order (as the queries sort). */
  sorted: string[];
}

/** Base sums kept per window at most: a base bigger than this is not kept (memory), the window is summed each time. */
export const BASE_MAX_KEYS = 500_000;

/** `a` before `b` in SQLite's BINARY order of text (UTF-8 bytes, i.e. code points), unlike `<` on UTF-16 units. */
export function binaryCompare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unitRank(x) - unitRank(y);
  }
  return a.length - b.length;
}

/** Surrogates (code points past U+FFFF) rank above U+E000..U+FFFF, as they do in UTF-8. */
function unitRank(u: number): number {
  if (u < 0xd800) return u;
  return u < 0xe000 ? u + 0x2000 : u - 0x800;
}

function byCount(a: TopEntry, b: TopEntry): number {
  return b.count - a.count || binaryCompare(a.value, b.value);
}

/** Base leaders looked up by key at most; past that (ties), every hot key is read. */
export const MAX_SURE_KEYS = 500;

/**
 * Which keys can make the list, without reading every hot key: the base's first `top` keys
 * sum to at least `t` (the top-th one's base count) each, so a key can only make it with a
 * total >= t. `sure`: every key whose base count alone is >= t (their hot counts are looked
 * up); any other key has a base count <= `rest` (the next one's), so it needs a hot count
 * >= `least` = t - rest.
 */
export function candidates(base: BaseSums, top: number): { sure: string[]; least: number } {
  const t = base.sorted.length >= top ? base.sums.get(base.sorted[top - 1]!)! : 0;
  let n = Math.min(top, base.sorted.length);
  while (n < base.sorted.length && base.sums.get(base.sorted[n]!)! >= t) n++;
  const rest = n < base.sorted.length ? base.sums.get(base.sorted[n]!)! : 0;
  return { sure: base.sorted.slice(0, n), least: Math.max(1, t - rest) };
}

/**
 * The `top` most frequent keys of base + hot (hot: summed rows of hot hours, each key once or
 * twice with the same count: every key that can make the list, see `candidates`).
 */
export function mergeTop(base: BaseSums, hot: TopEntry[], top: number): TopEntry[] {
  // The best `top` so far, kept sorted: most candidates lose to the last one at once.
  const best: TopEntry[] = [];
  const offer = (e: TopEntry) => {
    if (best.length === top && byCount(e, best[top - 1]!) >= 0) return;
    let i = best.length;
    while (i > 0 && byCount(e, best[i - 1]!) < 0) i--;
    best.splice(i, 0, e);
    if (best.length > top) best.pop();
  };
  const inHot = new Set<string>();
  for (const h of hot) {
    if (inHot.has(h.value)) continue;
    inHot.add(h.value);
    offer({ value: h.value, count: h.count + (base.sums.get(h.value) ?? 0) });
  }
  let taken = 0;
  for (const k of base.sorted) {
    if (taken === top) break;
    if (inHot.has(k)) continue;
    offer({ value: k, count: base.sums.get(k)! });
    taken++;
  }
  return best;
}
