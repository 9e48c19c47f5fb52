/** The batch codec between ingest and writer instances (src/cluster/wire.ts). */
import { expect, test } from "bun:test";
import { checkPayloadRoom, decodeBatch, encodeBatch, mergeBatches, WireError, type WireDictionary } from "../../src/cluster/wire";
import { batchData, type EventBatch, type SourceEntry, type TypeEntry } from "../../src/db/event-store";

const BIG = "18446744073709551557";
const sources: SourceEntry[] = [
  { id: 1, nodeId: BIG, potId: "cowrie-01", potType: "cowrie" },
  { id: 2, nodeId: null, potId: null, potType: null },
  { id: 3, nodeId: "7", potId: "pöt.ünï", potType: "dionaea" },
];
const types: TypeEntry[] = [
  { id: 1, name: "cowrie.login.failed" },
  { id: 5, name: "dionaea.connection" },
];
const dict: WireDictionary = { sources: new Map(sources.map((s) => [s.id, s])), types: new Map(types.map((t) => [t.id, t])) };

/** Events: [ts, source, type, ip, data text]. */
function batch(events: [number, number, number, string, string][], extra: Partial<EventBatch> = {}): EventBatch {
  const texts = events.map((e) => e[4]);
  const bytes = Buffer.from(texts.join(""));
  const dataEnds = new Int32Array(events.length);
  for (let i = 0, at = 0; i < events.length; i++) dataEnds[i] = at += Buffer.byteLength(texts[i]!);
  return {
    n: events.length,
    ts: Float64Array.from(events.map((e) => e[0])),
    sourceId: Int32Array.from(events.map((e) => e[1])),
    typeId: Int32Array.from(events.map((e) => e[2])),
    srcIps: events.map((e) => e[3]).join("\n"),
    data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer,
    dataEnds,
    credCounts: "",
    newSources: [],
    newTypes: [],
    spools: [],
    ...extra,
  };
}

/** What a batch says, independent of its cut: one row per event, entries by value. */
function rows(b: EventBatch) {
  const src = new Map(b.newSources.map((s) => [s.id, s]));
  const typ = new Map(b.newTypes.map((t) => [t.id, t]));
  const ips = b.srcIps.split("\n");
  const data = batchData(b);
  return Array.from({ length: b.n }, (_, i) => ({ ts: b.ts[i], source: src.get(b.sourceId[i]!) ?? dict.sources.get(b.sourceId[i]!), type: (typ.get(b.typeId[i]!) ?? dict.types.get(b.typeId[i]!))!.name, ip: ips[i], data: data[i] }));
}

/** Keys as a writer sees them: any 64-bit values, negative ones too. */
const keysFor = (b: EventBatch, from = 0) => BigInt64Array.from({ length: b.n }, (_, i) => BigInt.asIntN(64, (BigInt(from + i) << 40n) ^ 0xfedcba9876543210n));

const sample = () =>
  batch(
    [
      [1_700_000_000_000, 1, 1, "203.0.113.9", '{"username":"root","password":"ü€𝄞"}'],
      [1_700_000_000_001, 2, 5, "", '{"a":"\\u0000 nul","b":"tab\\t"}'],
      [1_700_000_000_002, 3, 1, "2001:db8::1", `{"node_id":${BIG}}`],
    ],
    { credCounts: '[["username",472222,[["root",1]]]]', spools: [[`spool:${BIG}:main`, 42]] },
  );

test("a batch comes back whole: u64 node ids, unicode data, empty addresses, credentials, spools, keys", () => {
  const b = sample();
  const keys = keysFor(b);
  const parts = encodeBatch(b, keys, dict, 1 << 20);
  expect(parts.length).toBe(1);
  // At an odd offset, as a message's bytes may be.
  const shifted = new Uint8Array(parts[0]!.length + 1);
  shifted.set(parts[0]!, 1);
  const d = decodeBatch(shifted.subarray(1));
  // And inside a Buffer of a shared pool, as the NATS client may hand it.
  expect(rows(decodeBatch(Buffer.from(parts[0]!)))).toEqual(rows(b));
  expect(rows(d)).toEqual(rows(b));
  expect(d.newSources.find((s) => s.id === 1)!.nodeId).toBe(BIG);
  expect(d.newSources.find((s) => s.id === 2)).toEqual(sources[1]!);
  expect([...d.keys]).toEqual([...keys]);
  expect({ creds: d.credCounts, complete: d.credsComplete, spools: d.spools }).toEqual({ creds: b.credCounts, complete: true, spools: b.spools });
});

test("a batch larger than a message is cut between events, each part complete on its own", () => {
  const events: [number, number, number, string, string][] = [];
  for (let i = 0; i < 500; i++) events.push([1_700_000_000_000 + i, 1 + (i % 3), i % 2 ? 1 : 5, i % 7 ? `198.51.${i % 256}.1` : "", JSON.stringify({ i, pad: "é".repeat(i % 50), username: `u${i}` })]);
  const b = batch(events, { credCounts: '[["username",1,[["u1",1]]]]', spools: [["spool:7:main", 500]] });
  const keys = keysFor(b);
  const max = 4096;
  const parts = encodeBatch(b, keys, dict, max);
  expect(parts.length).toBeGreaterThan(5);
  for (const p of parts) expect(p.length).toBeLessThanOrEqual(max);
  const decoded = parts.map(decodeBatch);
  expect(decoded.flatMap(rows)).toEqual(rows(b));
  expect(decoded.flatMap((d) => [...d.keys])).toEqual([...keys]);
  // Credential counts of the whole batch cannot be cut: the writer counts from the data then.
  expect(decoded.every((d) => !d.credsComplete && d.credCounts === "")).toBe(true);
  expect(decoded.map((d) => d.spools.length)).toEqual([...decoded.slice(1).map(() => 0), 1]);
  // Each part carries only the entries its events use.
  for (const d of decoded) expect(new Set(d.newSources.map((s) => s.id))).toEqual(new Set(d.sourceId));
});

test("an event that cannot fit in a message even alone is a clear error", () => {
  const b = batch([[1, 1, 1, "", JSON.stringify({ big: "x".repeat(5000) })]]);
  expect(() => encodeBatch(b, keysFor(b), dict, 4096)).toThrow(/an event of 5\d{3} bytes does not fit in one message on the bus \(its max_payload is 4096 bytes\)/);
  expect(checkPayloadRoom(1 << 20, 1 << 20)).toMatch(/lower max_message_bytes or raise the NATS servers' max_payload/);
  expect(checkPayloadRoom(1 << 19, 1 << 20)).toBeNull();
});

test("bytes that are not a batch are refused with a WireError, never a crash", () => {
  const good = encodeBatch(sample(), keysFor(sample()), dict, 1 << 20)[0]!;
  const bad: Uint8Array[] = [new Uint8Array(0), Buffer.from('{"event_type":"x"}'), good.subarray(0, good.length - 1), Buffer.concat([good, Buffer.from([0])])];
  const flipped = good.slice();
  flipped[6] = 0xff; // the event count
  bad.push(flipped);
  const version = good.slice();
  version[4] = 9;
  bad.push(version);
  // Every single-bit flip of the header and the dictionary.
  for (let bit = 0; bit < 120 * 8; bit++) {
    const r = good.slice();
    r[bit >> 3]! ^= 1 << (bit & 7);
    bad.push(r);
  }
  for (const [i, m] of bad.entries()) {
    try {
      decodeBatch(m);
      // A flipped bit inside a name or a time may still make a well-formed batch.
      if (i < 6) throw new Error(`message ${i} decoded`);
    } catch (e) {
      expect(e).toBeInstanceOf(WireError);
    }
  }
});

test("messages merged for one commit keep every event, renumber each message's own dictionary, and sum their counts", () => {
  const one = decodeBatch(encodeBatch(sample(), keysFor(sample()), dict, 1 << 20)[0]!);
  // A second ingest instance numbers its sources and types otherwise: its 1 is the first's 3.
  const otherSources: SourceEntry[] = [{ ...sources[2]!, id: 1 }, { ...sources[0]!, id: 9 }];
  const otherTypes: TypeEntry[] = [{ id: 1, name: "dionaea.connection" }, { id: 2, name: "other.kind" }];
  const otherDict: WireDictionary = { sources: new Map(otherSources.map((x) => [x.id, x])), types: new Map(otherTypes.map((t) => [t.id, t])) };
  const b2 = batch(
    [
      [1_700_000_000_010, 1, 1, "198.51.100.1", '{"x":1}'],
      [1_700_000_000_011, 9, 2, "", '{"x":2}'],
    ],
    { credCounts: '[["password",472222,[["123456",2]]]]', spools: [[`spool:${BIG}:main`, 40], [`spool:${BIG}:other`, 7]] },
  );
  const two = decodeBatch(encodeBatch(b2, keysFor(b2, 1000), otherDict, 1 << 20)[0]!);
  const merged = mergeBatches([one, two]);
  const named = (b: typeof one) => rows(b).map((r) => ({ ...r, source: r.source && { nodeId: r.source.nodeId, potId: r.source.potId, potType: r.source.potType } }));
  expect(named(merged)).toEqual([...named(one), ...named(two)]);
  expect([...merged.keys]).toEqual([...one.keys, ...two.keys]);
  expect(merged.newSources.length).toBe(3);
  expect(new Set(merged.newTypes.map((t) => t.name))).toEqual(new Set(["cowrie.login.failed", "dionaea.connection", "other.kind"]));
  expect(merged.spools.sort()).toEqual([[`spool:${BIG}:main`, 42], [`spool:${BIG}:other`, 7]]);
  expect(merged.credsComplete).toBe(true);
  expect(JSON.parse(merged.credCounts)).toEqual([["username", 472222, [["root", 1]]], ["password", 472222, [["123456", 2]]]]);
  // One message without its own counts: the writer counts the whole lot from the data.
  expect(mergeBatches([one, { ...two, credsComplete: false }]).credsComplete).toBe(false);
});
