import { expect, test } from "bun:test";
import { BLOOM_BYTES, bloomHas } from "../../src/db/bloom";
import { SEG_SIZE } from "../../src/db/event-store";
import { SegmentSummaries } from "../../src/db/segment-summary";

// The step both backends' writers run (the SQLite writer, PostgreSQL's single and cluster
// writers): what a batch adds to event_segments and event_segment_keys, with no database.

/** n events from id `firstId`: times, types, sources and addresses made from the index. */
function batch(n: number, at: (i: number) => { ts: number; type: number; source: number; ip: string }) {
  const rows = Array.from({ length: n }, (_, i) => at(i));
  return {
    n,
    ts: Float64Array.from(rows, (r) => r.ts),
    typeIds: Int32Array.from(rows, (r) => r.type),
    sourceIds: Int32Array.from(rows, (r) => r.source),
    ips: rows.map((r) => r.ip),
  };
}

const run = (s: SegmentSummaries, firstId: number, b: ReturnType<typeof batch>) => s.summarize(b.n, firstId, b.ts, b.typeIds, b.sourceIds, b.ips);

test("a batch across a segment boundary gives one summary per segment: its time range, count, types, sources and addresses", () => {
  const s = new SegmentSummaries();
  // Ids SEG_SIZE - 3 .. SEG_SIZE + 2: three events in segment 0, three in segment 1; times out of order.
  const times = [500, 100, 300, 900, 700, 800];
  const b = batch(6, (i) => ({ ts: times[i]!, type: i < 3 ? 1 : 2 + (i % 2), source: 10 + (i % 2), ip: i === 4 ? "" : `198.51.100.${i}` }));
  const segs = run(s, SEG_SIZE - 3, b);
  expect(segs.map((g) => ({ seg: g.seg, minTs: g.minTs, maxTs: g.maxTs, count: g.count, types: [...g.types].sort(), sources: [...g.sources].sort() }))).toEqual([
    { seg: 0, minTs: 100, maxTs: 500, count: 3, types: [1], sources: [10, 11] },
    { seg: 1, minTs: 700, maxTs: 900, count: 3, types: [2, 3], sources: [10, 11] },
  ]);
  expect(segs[0]!.bloom.length).toBe(BLOOM_BYTES);
  for (let i = 0; i < 3; i++) expect(bloomHas(segs[0]!.bloom, `198.51.100.${i}`)).toBe(true);
  expect(bloomHas(segs[1]!.bloom, "198.51.100.3")).toBe(true);
  expect(bloomHas(segs[1]!.bloom, "198.51.100.5")).toBe(true);
  // Each segment's filter holds its own addresses only (these would be false positives).
  expect(bloomHas(segs[1]!.bloom, "198.51.100.0")).toBe(false);
  expect(bloomHas(segs[0]!.bloom, "198.51.100.5")).toBe(false);
});

test("the newest segment's filter carries on across batches (and from the stored one); a new segment starts empty", () => {
  const s = new SegmentSummaries();
  const stored = new Uint8Array(BLOOM_BYTES);
  s.useBloom(2, stored);
  const first = run(s, 2 * SEG_SIZE + 10, batch(2, (i) => ({ ts: 1000 + i, type: 1, source: 1, ip: `203.0.113.${i}` })));
  // The stored filter is the one added to: the backend writes it back whole.
  expect(first[0]!.bloom).toBe(stored);
  const second = run(s, 2 * SEG_SIZE + 12, batch(1, () => ({ ts: 2000, type: 1, source: 1, ip: "203.0.113.9" })));
  expect(second[0]!.bloom).toBe(stored);
  for (const ip of ["203.0.113.0", "203.0.113.1", "203.0.113.9"]) expect(bloomHas(second[0]!.bloom, ip)).toBe(true);
  // The batch's own range and count, not the segment's so far: the backend adds them to what it stored.
  expect([second[0]!.minTs, second[0]!.maxTs, second[0]!.count]).toEqual([2000, 2000, 1]);
  const next = run(s, 3 * SEG_SIZE, batch(1, () => ({ ts: 3000, type: 1, source: 1, ip: "203.0.113.50" })));
  expect(next[0]!.seg).toBe(3);
  expect(next[0]!.bloom).not.toBe(stored);
  expect(bloomHas(next[0]!.bloom, "203.0.113.0")).toBe(false);
  // Another writer of a cluster wrote meanwhile: no stored filter means a fresh one.
  s.useBloom(3, null);
  expect(bloomHas(run(s, 3 * SEG_SIZE + 1, batch(1, () => ({ ts: 3001, type: 1, source: 1, ip: "" })))[0]!.bloom, "203.0.113.50")).toBe(false);
});

test("segment keys are new until their batch commits, and again after retention forgets them", () => {
  const s = new SegmentSummaries();
  const b = batch(3, (i) => ({ ts: i, type: 7 + (i % 2), source: 4, ip: "" }));
  const segs = run(s, 1, b);
  const keys = s.newKeys(segs);
  const rows = keys.kinds.map((kind, k) => `${keys.segs[k]}/${kind}/${keys.values[k]}`);
  expect(rows.sort()).toEqual(["0/source/4", "0/type/7", "0/type/8"]);
  expect(keys.names.slice().sort()).toEqual(rows);
  // Not committed (the transaction failed): the same keys again.
  expect(s.newKeys(run(s, 1, b)).names.length).toBe(3);
  s.committed(keys);
  const again = s.newKeys(run(s, 4, batch(2, (i) => ({ ts: i, type: 8 + i, source: 4, ip: "" }))));
  expect(again.names).toEqual(["0/type/9"]);
  s.committed(again);
  expect(s.newKeys(run(s, 6, b)).names).toEqual([]);
  s.forgetKeys();
  expect(s.newKeys(run(s, 6, b)).names.length).toBe(3);
});
