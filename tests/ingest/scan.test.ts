/**
 * The fast path (scan.ts + fromScanned) must agree with the general path (JSON.parse +
 * normalise) on every line it takes, and must never take a line that is not JSON.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fromScanned } from "../../src/core/ingest/from-scanned";
import { normalise, toIngestEvent, type IngestEvent, type NormaliseContext } from "../../src/core/ingest/normalise";
import { parseEventLine } from "../../src/core/ingest/parse";
import { dataBytes, dataText, newScannedLine, scanNativeLine, writeData, type ScannedLine } from "../../src/core/ingest/scan";
import { eventLines } from "../../bench/ingest-events";
import { scanEnvelopeLine } from "../../src/core/ingest/scan-envelope";
import { parseWithIds, stringify } from "../../src/protocol/json";
import { goPotEvent, goPotLog } from "../helpers/go-node";
import { nestedDeeperThan } from "../../src/protocol/depth";

// After the samples' and the bench's times: a time over 5 minutes ahead of it is far off (timestamp.ts).
const ctx: NormaliseContext = { receivedAt: Date.UTC(2026, 10, 28), nodeId: null, nodeOfPot: (p) => (p === "registered-pot" ? 42n : null) };
const sampleLines = (name: string) => readFileSync(join(import.meta.dir, "samples", name), "utf8").split("\n").filter(Boolean);

type Scanner = (line: string, out: ScannedLine) => boolean;

/** The general path's result for a line, or null when it is not an event. */
function general(line: string, c = ctx): IngestEvent | null {
  let value: unknown;
  try {
    value = parseEventLine(line);
  } catch {
    return null;
  }
  const r = normalise(value, c);
  return r.ok ? toIngestEvent(r.event) : null;
}

/** The fast path's result, or null when it leaves the line to the general path. */
function fast(line: string, scan: Scanner = scanNativeLine, c = ctx): IngestEvent | null {
  const s = newScannedLine();
  if (!scan(line, s)) return null;
  const ev = fromScanned(s, c);
  if (ev === null) return null;
  ev.text = dataText(s);
  // The pipeline's other way to the same data: bytes copied from an ASCII line.
  if (Buffer.byteLength(line) === line.length) {
    const dst = Buffer.alloc(dataBytes(s) + 2);
    const end = writeData(s, Buffer.from("x" + line), 1, dst, 1);
    expect(dst.toString("utf8", 1, end)).toBe(ev.text);
  }
  return ev;
}

/** Both paths agree: same columns, same credentials, data equal as JSON values (u64 exact). */
function expectAgree(line: string, got: IngestEvent, c = ctx) {
  const want = general(line, c);
  expect(want).not.toBeNull();
  const { text: gotText, ...gotCols } = got;
  const { text: wantText, ...wantCols } = want!;
  expect(gotCols).toEqual(wantCols);
  expect(parseWithIds(gotText!)).toEqual(parseWithIds(wantText!));
}

describe("fast path for flat native events", () => {
  test("takes the shared samples and the bench's events, with the general path's result", () => {
    const lines = [...sampleLines("cowrie-2.9-honeybee-output.jsonl"), ...sampleLines("honnypotter-forwarder-output.jsonl")];
    const make = eventLines(3, Date.UTC(2026, 10, 22));
    for (let i = 0; i < 200; i++) lines.push(make(i));
    let taken = 0;
    for (const line of lines) {
      const got = fast(line);
      if (got === null) continue;
      taken++;
      expectAgree(line, got);
    }
    // The samples escape "/" (PHP's json_encode) in fields that are not columns, and Cowrie
    // sends lists (kex algorithms, session params): all still taken.
    expect(taken).toBe(lines.length);
  });

  test("cuts the column fields out of data and keeps everything else as sent", () => {
    const line = '{"eventid":"cowrie.login.failed", "username":"root","password":"1234","timestamp":"2026-11-22T01:07:41.947Z","src_ip":"203.0.113.9","n":1.50,"ok":true,"none":null,"esc":"a\\"b\\u00e9","node_id":18446744073709551557,"pot_id":"p1"}';
    const got = fast(line)!;
    expect(got).toMatchObject({ node_id: 18446744073709551557n, pot_id: "p1", pot_type: "cowrie", event_type: "cowrie.login.failed", src_ip: "203.0.113.9", username: "root", password: "1234", ts: Date.parse("2026-11-22T01:07:41.947Z") });
    expect(got.text).toBe('{"username":"root","password":"1234","n":1.50,"ok":true,"none":null,"esc":"a\\"b\\u00e9"}');
    expectAgree(line, got);
  });

  test("leaves to the general path what it cannot be sure of", () => {
    const leaves = [
      '{"eventid":"x.y","src_ip":{"v":1}}', // nested value in a column
      '{"eventid":"x.y","list":[1,2,]}', // invalid nested value
      '{"eventid":"x.y","deep":' + "[".repeat(40) + "]".repeat(40) + "}", // deeper than the scan goes
      '{"event_type":"x.y","src_ip":"1.2.3.4"}', // not native
      '{"version":2,"message":{"PotEvent":{}}}',
      '{"eventid":"x.y","version":2,"message":{"PotLog":{"log_type":"a"}}}', // an envelope (protocol/classify.ts)
      '{"eventid":"x.y","message":{"text":"t"}}', // an object message: the general path tells envelopes apart
      '{"eventid":"x\\u002ey"}', // escape in a column
      '{"eventid":"x.y","src_ip":"not an address with spaces"}', // kept in data by the general path
      '{"eventid":"x.y","timestamp":"yesterday"}', // kept in data by the general path
      '{"eventid":"x.y","timestamp":"1970-01-01T00:00:01Z"}', // far off: kept in data by the general path
      '{"eventid":"x.y","timestamp":"9999-12-31T23:59:59Z"}',
      '{"eventid":"x.y","time":1}',
      '{"eventid":"x.y","node_id":-1}',
      '{"eventid":"x.y","node_id":18446744073709551616}', // above u64
      '{"eventid":"x.y","pot_id":7}',
      '{"eventid":"x.y","__proto__":"p"}',
      '{"eventid":""}',
      '{"eventid":"x.y"}{"eventid":"x.z"}', // concatenated: the general path splits those
    ];
    for (const line of leaves) expect(fast(line)).toBeNull();
  });

  test("refuses every kind of invalid JSON", () => {
    const invalid = ["01", "1.", ".5", "-", "1e", "1e+", "+1", "NaN", "Infinity", "tru", "nul", '"\\x"', '"\\u12G4"', '"a\u0001b"', '"open', "'single'", "[1,]", "[1 2]", '{"a" 1}', '{"a":1,}', "{a:1}"];
    for (const v of invalid) {
      const line = `{"eventid":"x.y","v":${v}}`;
      expect(() => JSON.parse(line)).toThrow();
      expect(scanNativeLine(line, newScannedLine())).toBe(false);
    }
    for (const line of ['{"eventid":"x.y",}', '{"eventid":"x.y"} x', '{"eventid":"x.y","a":1', '{"eventid" "x.y"}', '{"eventid":"x.y",,"a":1}']) {
      expect(() => JSON.parse(line)).toThrow();
      expect(scanNativeLine(line, newScannedLine())).toBe(false);
    }
  });

  test("never takes a line that is not JSON, and agrees on every mutation it takes", () => {
    let seed = 1234567;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const keys = ["eventid", "node_id", "pot_id", "pot_type", "honeybee_honeypot_id", "honeybee_honeypot_type", "timestamp", "time", "src_ip", "username", "password", "message", "version", "session", "x", ""];
    const values = ['"cowrie.login.failed"', '"203.0.113.7"', '"2026-11-22T01:07:41.947Z"', "1795309499", "1795309661.9470484", "18446744073709551557", "0", "-0.5e-3", "1E+2", "true", "false", "null", '""', '"a\\\\b"', '"\\u00e9\\n"', '"tab\\tq\\"uote"', '"é日本🐝"', "{}", "[1]", '{"a":[1,{"b":null}],"c":"d"}', "[ ]", '[true,"x\\"]', '[true,"x\\\\"]', '{"PotEvent":{"event_type":"e"}}', '{"Nope":{}}'];
    const chars = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "0", "-", ".", "e", "u", "a", "\u0001", "\t", "n", "t", "f"];
    let accepted = 0;
    for (let round = 0; round < 10_000; round++) {
      const members = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => `"${pick(keys)}"${pick(["", " "])}:${pick(["", " "])}${pick(values)}`);
      if (rnd() < 0.8) members.unshift(`"eventid":${pick(['"cowrie.session.connect"', '"honnypotter.login.failed"', '"x"'])}`);
      let line = `{${members.join(pick([",", ", "]))}}`;
      // Half the lines get one to three random edits: most become invalid JSON.
      if (rnd() < 0.5) {
        for (let e = 1 + Math.floor(rnd() * 3); e > 0; e--) {
          const at = Math.floor(rnd() * (line.length + 1));
          const op = rnd();
          if (op < 0.33) line = line.slice(0, at) + line.slice(at + 1);
          else if (op < 0.66) line = line.slice(0, at) + pick(chars) + line.slice(at);
          else line = line.slice(0, at) + pick(chars) + line.slice(at + 1);
        }
      }
      const s = newScannedLine();
      if (!scanNativeLine(line, s)) continue;
      expect(() => JSON.parse(line)).not.toThrow();
      const got = fast(line);
      if (got === null) continue;
      accepted++;
      expectAgree(line, got);
    }
    expect(accepted).toBeGreaterThan(500);
  });
});

describe("fast path for PotEvent and PotLog envelopes", () => {
  const node = { node_id: 18446744073709551557n, pot_id: "registered-pot", pot_type: "cowrie" };
  const envCtx: NormaliseContext = { ...ctx, potTypeOf: (_n, p) => (p === "registered-pot" ? "honeytrap" : null) };

  const fastEnv = (line: string) => fast(line, scanEnvelopeLine, envCtx);
  const expectAgreeEnv = (line: string, got: IngestEvent) => expectAgree(line, got, envCtx);

  /** The bench's Cowrie lines as each kind of sender wraps them. */
  function envelopes(n: number): string[] {
    const make = eventLines(5, Date.UTC(2026, 10, 22));
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const { eventid, timestamp, node_id: _n, pot_id: _p, pot_type: _t, ...rest } = parseWithIds(make(i)) as Record<string, unknown>;
      const env = (kind: string, payload: unknown) => stringify({ version: 2, message: { [kind]: payload } });
      out.push(env("PotEvent", { node_id: node.node_id, pot_id: node.pot_id, pot_type: "cowrie", event_type: eventid, timestamp, data: rest }));
      out.push(env("PotEvent", goPotEvent({ eventid, ...rest }, node, Date.parse(timestamp as string))));
      out.push(env("PotLog", goPotLog({ eventid, timestamp, ...rest }, node, Date.parse(timestamp as string))));
    }
    return out;
  }

  test("takes what nodes send (our PotEvent, the Go node's PotEvent and PotLog), with the general path's result", () => {
    const lines = envelopes(300);
    for (const raw of [...sampleLines("cowrie-2.9-honeybee-output.jsonl"), ...sampleLines("honnypotter-forwarder-output.jsonl")]) {
      const { eventid, ...rest } = JSON.parse(raw);
      lines.push(stringify({ version: 2, message: { PotLog: goPotLog({ eventid, ...rest }, node) } }));
    }
    let taken = 0;
    for (const line of lines) {
      const got = fastEnv(line);
      if (got === null) continue;
      taken++;
      expectAgreeEnv(line, got);
    }
    expect(taken).toBe(lines.length);
  });

  test("cuts the columns out of data and keeps the rest as sent", () => {
    const potLog = '{"version":2,"message":{"PotLog":{"node_id":7,"pot_id":"p1","pot_type":"cowrie","log_type":"cowrie.login.failed","data":{"eventid":"cowrie.login.failed","src_ip":"203.0.113.9","username":"root","password":"x","timestamp":"2026-11-22T01:07:41.947Z","message":"m"},"timestamp":"2026-11-22T01:07:41Z"}}}';
    const got = fastEnv(potLog)!;
    expect(got).toEqual({ node_id: 7n, pot_id: "p1", pot_type: "cowrie", event_type: "cowrie.login.failed", ts: Date.parse("2026-11-22T01:07:41.947Z"), src_ip: "203.0.113.9", username: "root", password: "x", text: '{"username":"root","password":"x","message":"m"}' });
    expectAgreeEnv(potLog, got);
    // A payload member wins over a nested one of the same name; the payload's src_ip leaves the nested one in data.
    const potEvent = '{"message":{"PotEvent":{"data":{"username":"nested","src_ip":"192.0.2.1","k":1},"username":"top","event_type":"e.x","src_ip":"203.0.113.9","pot_id":"registered-pot"}},"version":2}';
    const ev = fastEnv(potEvent)!;
    expect(ev).toMatchObject({ username: "top", src_ip: "203.0.113.9", pot_type: "honeytrap", event_type: "e.x" });
    expectAgreeEnv(potEvent, ev);
  });

  test("leaves to the general path what it cannot be sure of", () => {
    const leaves = [
      '{"version":3,"message":{"PotEvent":{"event_type":"e"}}}', // another version: worded by the general path
      '{"version":2.0,"message":{"PotEvent":{"event_type":"e"}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e"},"PotLog":{}}}', // two kinds
      '{"version":2,"message":{"NodeEvent":"Started"}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e"}},"extra":1}',
      '{"version":2,"message":{"PotLog":{"log_type":"stdout","data":"a line"}}}', // a process's output
      '{"version":2,"message":{"PotLog":{"log_type":"a.b","data":{"timestamp":"yesterday"}}}}', // kept in data by the general path
      '{"version":2,"message":{"PotLog":{"log_type":"a.b","data":{"node_id":"7"}}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e","data":{"a":1},"metadata":{"b":2}}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e","src_ip":null,"data":{"src_ip":"192.0.2.1"}}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e","__proto__":{"x":1}}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e\\u002e"}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e","timestamp":"never"}}}',
      '{"version":2,"message":{"PotEvent":{"event_type":"e","timestamp":"1970-01-01T00:00:01Z"}}}', // far off
      '{"version":2,"message":{"PotLog":{"log_type":"a.b","data":{"timestamp":"9999-12-31T23:59:59Z"}}}}',
      '{"version":2,"message":{"PotEvent":{}}}',
    ];
    for (const line of leaves) expect(fastEnv(line)).toBeNull();
  });

  test("never takes a line that is not JSON, and agrees on every mutation it takes", () => {
    let seed = 7654321;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
    const chars = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "0", "2", "-", ".", "e", "u", "a", "\u0001", "n", "t", "f"];
    const words = ['"src_ip"', '"data"', '"metadata"', '"timestamp"', '"username"', '"eventid"', '"log_type"', '"event_type"', '"event"', '"pot_id"', '"pot_type"', '"node_id"', "null", '"x.y"', "2", "3"];
    const base = envelopes(40);
    let accepted = 0;
    for (let round = 0; round < 10_000; round++) {
      let line = pick(base);
      for (let e = 1 + Math.floor(rnd() * 3); e > 0; e--) {
        const at = Math.floor(rnd() * (line.length + 1));
        const op = rnd();
        if (op < 0.25) line = line.slice(0, at) + line.slice(at + 1);
        else if (op < 0.5) line = line.slice(0, at) + pick(chars) + line.slice(at);
        else if (op < 0.75) line = line.slice(0, at) + pick(chars) + line.slice(at + 1);
        else line = line.replace(/"[a-z_]+"(?=:)/, pick(words));
      }
      const s = newScannedLine();
      if (!scanEnvelopeLine(line, s)) continue;
      expect(() => JSON.parse(line)).not.toThrow();
      const got = fastEnv(line);
      if (got === null) continue;
      accepted++;
      expectAgreeEnv(line, got);
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  test("takes no envelope deeper than max_nesting_depth", () => {
    const deep = (n: number) => `{"version":2,"message":{"PotEvent":{"event_type":"x.y","data":{"d":${"[".repeat(n - 4)}${"]".repeat(n - 4)}}}}}`;
    expect(scanEnvelopeLine(deep(6), newScannedLine(), 6)).toBe(true);
    expect(scanEnvelopeLine(deep(7), newScannedLine(), 6)).toBe(false);
    expect(nestedDeeperThan(deep(6), 6)).toBe(false);
    expect(nestedDeeperThan(deep(7), 6)).toBe(true);
  });
});

describe("nesting depth", () => {
  const levels = (n: number) => `{"eventid":"x.y","d":${"[".repeat(n - 1)}${"]".repeat(n - 1)}}`;

  test("the fast path takes no line deeper than max_nesting_depth", () => {
    expect(scanNativeLine(levels(4), newScannedLine(), 4)).toBe(true);
    expect(scanNativeLine(levels(5), newScannedLine(), 4)).toBe(false);
    expect(scanNativeLine('{"eventid":"x.y","a":{"b":{"c":{"d":{}}}}}', newScannedLine(), 4)).toBe(false);
    expect(scanNativeLine(levels(33), newScannedLine(), 64)).toBe(true);
  });

  test("nestedDeeperThan counts brackets outside strings only", () => {
    expect(nestedDeeperThan(levels(64), 64)).toBe(false);
    expect(nestedDeeperThan(levels(65), 64)).toBe(true);
    expect(nestedDeeperThan(`{"s":"${"[".repeat(100)}"}`, 2)).toBe(false);
    expect(nestedDeeperThan(`{"s":"\\"${"{".repeat(100)}"}`, 2)).toBe(false);
    expect(nestedDeeperThan(`{"s":"\\\\",${"[".repeat(3)}`, 3)).toBe(true);
    expect(nestedDeeperThan("[".repeat(100_000), 64)).toBe(true);
  });
});
