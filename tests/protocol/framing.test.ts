import { describe, expect, test } from "bun:test";
import { LineSplitter, splitConcatenated } from "../../src/protocol/framing";
import { parseWithIds, stringify, toU64 } from "../../src/protocol/json";
import { EventStreamHello, decodeEnvelope, normaliseCommand } from "../../src/protocol/messages";

function collect(max = 32) {
  const s = new LineSplitter(max);
  const lines: string[] = [];
  const oversized: number[] = [];
  const sink = { line: (l: string) => lines.push(l), oversized: (n: number) => oversized.push(n) };
  return { push: (t: string) => s.push(new TextEncoder().encode(t), sink), end: () => s.end(sink), lines, oversized };
}

describe("LineSplitter", () => {
  test("splits lines across chunks and trims CR", () => {
    const c = collect();
    c.push('{"a":1}\r\n{"b"');
    c.push(':2}\n\n{"c":3}');
    c.end();
    expect(c.lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  test("skips an oversized message up to its newline and goes on", () => {
    const c = collect(8);
    c.push("x".repeat(20));
    c.push("yyy\nok\n");
    expect(c.oversized).toEqual([23]);
    expect(c.lines).toEqual(["ok"]);
  });

  test("keeps multi-byte characters split across chunks intact", () => {
    const c = collect();
    const bytes = new TextEncoder().encode('"héllo"\n');
    const s = new LineSplitter();
    const lines: string[] = [];
    const sink = { line: (l: string) => lines.push(l), oversized: () => {} };
    s.push(bytes.subarray(0, 3), sink);
    s.push(bytes.subarray(3), sink);
    expect(lines).toEqual(['"héllo"']);
    expect(c.lines).toEqual([]);
  });
  test("an oversized line between ordinary ones in one chunk is skipped alone", () => {
    const c = collect(8);
    c.push("ab\r\n" + "x".repeat(12) + "\ncd\n\nef");
    c.push("\n");
    expect(c.oversized).toEqual([12]);
    expect(c.lines).toEqual(["ab", "cd", "ef"]);
  });

  test("any chunking of a stream gives the same lines", () => {
    const words = ["{\"a\":1}", "héllo wörld", "日本語テキスト", "x", "\r", "", "emoji 🐝 bee", "y".repeat(30)];
    let seed = 42;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let round = 0; round < 200; round++) {
      const lines = Array.from({ length: 1 + Math.floor(rnd() * 20) }, () => words[Math.floor(rnd() * words.length)]!);
      const bytes = new TextEncoder().encode(lines.join("\n") + "\n");
      const s = new LineSplitter(64);
      const got: string[] = [];
      const sink = { line: (l: string) => got.push(l), oversized: () => got.push("<oversized>") };
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + Math.floor(rnd() * 40);
        s.push(bytes.subarray(at, at + n), sink);
        at += n;
      }
      s.end(sink);
      expect(got).toEqual(lines.filter((l) => l !== "" && l !== "\r"));
    }
  });
});

describe("LineSplitter with objectEnds", () => {
  function objects(max = 64) {
    const s = new LineSplitter(max, { objectEnds: true });
    const lines: string[] = [];
    const oversized: number[] = [];
    const sink = { line: (l: string) => lines.push(l), oversized: (n: number) => oversized.push(n) };
    return { push: (t: string) => s.push(new TextEncoder().encode(t), sink), end: () => s.end(sink), lines, oversized };
  }

  test("a complete object is a message before any newline arrives", () => {
    const c = objects();
    c.push('{"a":"}{\\"",');
    expect(c.lines).toEqual([]);
    c.push('"b":[1,{"c":2}]}');
    expect(c.lines).toEqual(['{"a":"}{\\"","b":[1,{"c":2}]}']);
    c.push(' {"d":1} {"e"');
    expect(c.lines).toEqual(['{"a":"}{\\"","b":[1,{"c":2}]}', '{"d":1}']);
    c.push(":2}\r\n\n");
    c.end();
    expect(c.lines).toEqual(['{"a":"}{\\"","b":[1,{"c":2}]}', '{"d":1}', '{"e":2}']);
  });

  test("what is not an object waits for its newline as before", () => {
    const c = objects();
    c.push("[1,2]");
    c.push(' "x" {');
    expect(c.lines).toEqual([]);
    c.push("}\nnot json");
    expect(c.lines).toEqual(['[1,2] "x" {}']);
    c.end();
    expect(c.lines).toEqual(['[1,2] "x" {}', "not json"]);
  });

  test("an object without a newline still counts against the size bound", () => {
    const c = objects(16);
    c.push('{"pad":"' + "x".repeat(20));
    c.push('"}\n{"ok":1}');
    expect(c.oversized).toEqual([30]);
    expect(c.lines).toEqual(['{"ok":1}']);
  });

  test("any chunking gives the same messages as newline framing", () => {
    const messages = ['{"a":1}', '{"s":"}\\"{"}', '{"n":{"m":[{},[]]}}', '{"u":"héllo 🐝"}'];
    let seed = 7;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let round = 0; round < 200; round++) {
      const picked = Array.from({ length: 1 + Math.floor(rnd() * 10) }, () => messages[Math.floor(rnd() * messages.length)]!);
      const text = picked.map((m) => m + ["", "\n", " ", "\r\n"][Math.floor(rnd() * 4)]).join("");
      const bytes = new TextEncoder().encode(text);
      const s = new LineSplitter(64, { objectEnds: true });
      const got: string[] = [];
      const sink = { line: (l: string) => got.push(l), oversized: () => got.push("<oversized>") };
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + Math.floor(rnd() * 12);
        s.push(bytes.subarray(at, at + n), sink);
        at += n;
      }
      s.end(sink);
      // Objects with nothing between them may still arrive as one line (split by the receiver).
      expect(got.flatMap((l) => splitConcatenated(l) ?? [l])).toEqual(picked);
    }
  });
});

describe("splitConcatenated", () => {
  test("splits objects written back to back", () => {
    expect(splitConcatenated('{"a":"}{"}{"b":[1,{"c":2}]} {"d":"\\""}')).toEqual(['{"a":"}{"}', '{"b":[1,{"c":2}]}', '{"d":"\\""}']);
  });
  test("refuses what is not a sequence of objects", () => {
    expect(splitConcatenated('{"a":1')).toBeNull();
    expect(splitConcatenated("hello")).toBeNull();
    expect(splitConcatenated('[1]{"a":1}')).toBeNull();
  });
});

describe("u64 JSON", () => {
  test("node ids round-trip exactly", () => {
    const text = '{"node_id":18446744073709551557,"port":9001}';
    const v = parseWithIds(text) as { node_id: bigint };
    expect(v.node_id).toBe(18446744073709551557n);
    expect(stringify(v)).toBe(text);
  });
  test("toU64 accepts numbers, bigints and decimal strings in range only", () => {
    expect(toU64("18446744073709551615")).toBe(18446744073709551615n);
    expect(toU64("18446744073709551616")).toBeNull();
    expect(toU64(-1)).toBeNull();
    expect(toU64(1.5)).toBeNull();
    expect(toU64("12a")).toBeNull();
  });
});

describe("decodeEnvelope", () => {
  test("accepts unit variants in all three forms", () => {
    for (const message of ["NodeDrop", { NodeDrop: null }, { NodeDrop: {} }]) {
      expect(decodeEnvelope({ version: 2, message })).toEqual({ ok: true, kind: "NodeDrop", payload: null });
    }
  });
  test("names the problem", () => {
    expect(decodeEnvelope({ version: 1, message: "NodeDrop" })).toMatchObject({ ok: false, code: "unsupported_version" });
    expect(decodeEnvelope({ version: 2, message: { A: 1, B: 2 } })).toMatchObject({ ok: false, code: "bad_envelope" });
    expect(decodeEnvelope({ version: 2, message: { Nope: {} } })).toMatchObject({ ok: false, code: "unknown_kind" });
    expect(decodeEnvelope({ version: 2, message: { NodeStatusUpdate: { node_id: 1n } } })).toMatchObject({ ok: false, code: "invalid_payload" });
    expect(decodeEnvelope([1])).toMatchObject({ ok: false, code: "bad_envelope" });
  });
  test("EventStreamHello's spool_id and first_seq are part of its schema", () => {
    const hello = (fields: Record<string, unknown>) => decodeEnvelope({ version: 2, message: { EventStreamHello: { node_id: 1n, acks: true, ...fields } } });
    expect(hello({ spool_id: "5f0c9a7e21d4b386", first_seq: 120384 })).toMatchObject({ ok: true, payload: { spool_id: "5f0c9a7e21d4b386", first_seq: 120384 } });
    expect(hello({ first_seq: -1 })).toMatchObject({ ok: false, code: "invalid_payload", message: expect.stringContaining("/first_seq") });
    expect(hello({ spool_id: "s".repeat(129) })).toMatchObject({ ok: false, code: "invalid_payload", message: expect.stringContaining("/spool_id") });
    expect(Object.keys(EventStreamHello.properties).sort()).toEqual(["acks", "first_seq", "node_id", "spool_id", "totp_code"]);
  });
  test("unit commands in every form", () => {
    for (const c of ["GetInstalledPots", { GetInstalledPots: {} }, { GetInstalledPots: null }]) expect(normaliseCommand(c)).toEqual({ GetInstalledPots: null });
  });
});
