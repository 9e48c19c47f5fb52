import { describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { silentLogger } from "../../src/log";
import { Spool } from "../../src/node/spool";
import { tempDir } from "../helpers";

const ev = (i: number) => JSON.stringify({ seq: i, pad: "x".repeat(90) });
const open = (dir: string, over: { maxBytes?: number; segmentBytes?: number; onDrop?: (n: number, t: number) => void } = {}) =>
  Spool.open({ dir, maxBytes: 1 << 20, segmentBytes: 4096, logger: silentLogger(), ...over });
const seqs = (lines: string[]) => lines.map((l) => JSON.parse(l).seq);
/** read() answers from one segment at a time, as the forwarder uses it. */
function readAll(s: Spool, from: number, max = Infinity): number[] {
  const got: string[] = [];
  while (from < s.head && got.length < max) {
    const r = s.read(from, max - got.length);
    got.push(...r.lines);
    from = r.first + r.lines.length;
  }
  return seqs(got);
}
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe("spool", () => {
  test("reads back in order across segments; acked segments are deleted", () => {
    using dir = tempDir();
    const s = open(dir.path);
    s.append(Array.from({ length: 200 }, (_, i) => ev(i)));
    expect(s.head).toBe(200);
    const files = readdirSync(dir.path).filter((f) => f.endsWith(".ndjson"));
    expect(files.length).toBeGreaterThan(3);
    expect(readAll(s, 0)).toEqual(range(0, 200));
    s.ack(150);
    expect(s.pending).toBe(50);
    expect(readdirSync(dir.path).filter((f) => f.endsWith(".ndjson")).length).toBeLessThan(files.length);
    expect(readAll(s, 150, 10)).toEqual(range(150, 160));
    s.close();
  });

  test("reopening resumes after the acknowledged events and cuts a torn last line", () => {
    using dir = tempDir();
    const s = open(dir.path);
    s.append(Array.from({ length: 100 }, (_, i) => ev(i)));
    s.ack(60);
    s.close();
    const newest = readdirSync(dir.path).filter((f) => f.endsWith(".ndjson")).sort().at(-1)!;
    appendFileSync(join(dir.path, newest), '{"seq":100,"pad":"torn');
    const again = open(dir.path);
    expect([again.acked, again.head]).toEqual([60, 100]);
    expect(readAll(again, 60)).toEqual(range(60, 100));
    again.append([ev(100)]);
    expect(readAll(again, 100)).toEqual([100]);
    again.close();
  });

  test("the size bound drops whole oldest segments and counts what was not yet acknowledged", () => {
    using dir = tempDir();
    const drops: number[] = [];
    const s = open(dir.path, { maxBytes: 16 * 1024, segmentBytes: 2048, onDrop: (n) => drops.push(n) });
    s.append(Array.from({ length: 1000 }, (_, i) => ev(i)));
    expect(s.bytes).toBeLessThanOrEqual(16 * 1024);
    expect(s.bytes).toBeGreaterThan(12 * 1024);
    expect(s.droppedTotal).toBe(drops.reduce((a, b) => a + b, 0));
    expect(s.acked).toBe(s.droppedTotal);
    const r = s.read(0, 5);
    expect(r.first).toBe(s.droppedTotal);
    expect(seqs(r.lines)[0]).toBe(s.droppedTotal);
    expect(readAll(s, 0)).toEqual(range(s.droppedTotal, 1000));
    s.close();
    const again = open(dir.path);
    expect(again.droppedTotal).toBe(s.droppedTotal);
    again.close();
  });
});
