/** A cluster's idempotency keys name an event's sender and position, never its content (src/core/ingest/sender-keys.ts). */
import { expect, test } from "bun:test";
import { SenderKeys } from "../../src/core/ingest/sender-keys";
import type { StreamTag } from "../../src/core/ingest/types";

const spoolTag = (key: string, first: number): StreamTag => ({ lineNo: 0, outstanding: 0, settled: () => {}, spool: { key, first } });

/** Keys of events from `tag` (null: no position of their own), one per entry of `lines` (the line each event is on). */
function keysOf(k: SenderKeys, tag: StreamTag | null, lines: number[]): bigint[] {
  const keys = new BigInt64Array(lines.length);
  const words = new Uint32Array(keys.buffer);
  for (const [i, line] of lines.entries()) {
    if (tag) tag.lineNo = line;
    k.write(words, i, tag);
  }
  return [...keys];
}

const seq = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);

test("events without a position are numbered by the instance's run: identical ones are distinct, and so are two runs", () => {
  const a = keysOf(new SenderKeys("a-1"), null, seq(1, 200));
  const again = keysOf(new SenderKeys("a-2"), null, seq(1, 200));
  expect(new Set([...a, ...again]).size).toBe(400);
});

test("a node's spool events are named by spool and position, on whichever instance receives them", () => {
  const key = "spool:18446744073709551557:5f0c9a7e21d4b386";
  const onA = keysOf(new SenderKeys("a"), spoolTag(key, 0), seq(1, 10));
  // Resent to B from position 5: lines 1..10 are positions 6..15.
  const onB = keysOf(new SenderKeys("b"), spoolTag(key, 5), seq(1, 10));
  expect(onB.slice(0, 5)).toEqual(onA.slice(5));
  expect(new Set([...onA, ...onB]).size).toBe(15);
  const otherSpool = keysOf(new SenderKeys("a"), spoolTag("spool:18446744073709551557:0000000000000001", 0), seq(1, 10));
  const otherNode = keysOf(new SenderKeys("a"), spoolTag("spool:7:5f0c9a7e21d4b386", 0), seq(1, 10));
  expect(new Set([...onA, ...otherSpool, ...otherNode]).size).toBe(30);
});

test("a key is the sender's hash plus the position, modulo 2^64, for positions past 32 bits too", () => {
  const key = "spool:7:main";
  const h = Bun.hash.wyhash(key);
  for (const first of [0, 2 ** 32 - 3, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER - 10]) {
    const got = keysOf(new SenderKeys("a"), spoolTag(key, first), seq(1, 5));
    expect(got).toEqual(seq(1, 5).map((l) => BigInt.asIntN(64, h + BigInt(first + l))));
  }
});

test("several objects on one spool line are each an event of their own, the same on every instance", () => {
  const lines = [1, 2, 2, 2, 3];
  const onA = keysOf(new SenderKeys("a"), spoolTag("spool:7:main", 0), lines);
  const onB = keysOf(new SenderKeys("b"), spoolTag("spool:7:main", 0), lines);
  expect(new Set(onA).size).toBe(5);
  expect(onB).toEqual(onA);
});
