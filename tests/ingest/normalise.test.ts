import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { normalise, type NormaliseContext } from "../../src/core/ingest/normalise";
import { parseTimestamp, parseTimestampIn } from "../../src/core/ingest/timestamp";
import { isoTime } from "../../src/protocol/time";
import { parseEventLine } from "../../src/core/ingest/parse";
import { goData, goPotEvent, goPotLog } from "../helpers/go-node";

const NOW = Date.parse("2026-11-22T12:00:00.000Z");
const BIG = 18446744073709551557n;
const ctx = (over: Partial<NormaliseContext> = {}): NormaliseContext => ({ receivedAt: NOW, nodeId: null, nodeOfPot: () => null, ...over });
const ok = (value: unknown, c = ctx()) => {
  const r = normalise(value, c);
  if (!r.ok) throw new Error(r.error);
  return r.event;
};
// Copies of shared/samples: real Cowrie 2.9 and HonnyPotter forwarder output, byte for byte.
const sampleLines = (name: string) => readFileSync(join(import.meta.dir, "samples", name), "utf8").split("\n").filter(Boolean);

describe("normalise", () => {
  test("Cowrie's native line: pot from honeybee_*, data keeps every other field", () => {
    const line = sampleLines("cowrie-2.9-honeybee-output.jsonl")[3]!;
    expect(ok(parseEventLine(line))).toEqual({
      node_id: null,
      pot_id: "cowrie-lab",
      pot_type: "cowrie",
      event_type: "cowrie.login.failed",
      ts: Date.parse("2026-11-22T01:07:42.010Z"),
      src_ip: "127.0.0.1",
      data: {
        system: "HoneyPotSSHTransport,0,127.0.0.1",
        username: "admin",
        password: "wrongpw",
        message: "login attempt [admin/wrongpw] failed",
        time: 1795309662.0104773,
        sensor: "vm",
        uuid: "1b4b05d6-e611-11f1-aea8-02fc00000001",
        session: "61cb4b9d22c9",
        protocol: "ssh",
        honeybee_category: "authentication",
        honeybee_severity: "medium",
      },
    });
  });

  test("every sample line normalises; Cowrie's own `version` and `message` fields do not make it an envelope", () => {
    for (const line of [...sampleLines("cowrie-2.9-honeybee-output.jsonl"), ...sampleLines("honnypotter-forwarder-output.jsonl")]) {
      const e = ok(parseEventLine(line));
      expect(e.event_type).toMatch(/^(cowrie|honnypotter)\./);
    }
    const version = ok(parseEventLine(sampleLines("cowrie-2.9-honeybee-output.jsonl")[1]!));
    expect(version.data.version).toBe("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6");
  });

  test("the PHP forwarder's line: unix seconds, pot_id and pot_type fields, escaped slashes", () => {
    const e = ok(parseEventLine(sampleLines("honnypotter-forwarder-output.jsonl")[0]!));
    expect(e).toMatchObject({ pot_id: "honnypotter-01", pot_type: "honnypotter", event_type: "honnypotter.login.failed", ts: 1795309499000, src_ip: "127.0.0.1" });
    expect(e.data).toMatchObject({ username: "admin", password: "hunter2", user_agent: "curl/7.88.1", request_uri: "/standalone.php" });
  });

  test("pot type falls back to the eventid prefix", () => {
    expect(ok({ eventid: "cowrie.session.connect", src_ip: "10.0.0.1" }).pot_type).toBe("cowrie");
    expect(ok({ eventid: "noprefix" }).pot_type).toBeNull();
  });

  test("PotEvent, event_type + data style", () => {
    const e = ok({ node_id: 7, pot_id: "p1", pot_type: "cowrie", event_type: "cowrie.login.failed", timestamp: "2026-11-22T01:00:00Z", data: { src_ip: "1.2.3.4", username: "root" } });
    expect(e).toEqual({ node_id: 7n, pot_id: "p1", pot_type: "cowrie", event_type: "cowrie.login.failed", ts: Date.parse("2026-11-22T01:00:00Z"), src_ip: "1.2.3.4", data: { username: "root" } });
  });

  test("PotEvent, event + message + metadata style", () => {
    const e = ok({ node_id: 7, pot_id: "p1", event: "login", message: "failed login", metadata: { src_ip: "1.2.3.4", user: "x" }, timestamp: 1795309499 });
    expect(e).toEqual({ node_id: 7n, pot_id: "p1", pot_type: null, event_type: "login", ts: 1795309499000, src_ip: "1.2.3.4", data: { message: "failed login", user: "x" } });
  });

  test("envelopes: PotEvent, PotLog, NodeEvent", () => {
    const env = (kind: string, payload: unknown) => ({ version: 2, message: { [kind]: payload } });
    expect(ok(env("PotEvent", { node_id: BIG, pot_id: "p", event_type: "x.y", data: {} })).node_id).toBe(BIG);
    expect(ok(env("PotLog", { pot_id: "p", pot_type: "cowrie", log_type: "stderr", data: "boom", timestamp: 1795309499000 }))).toEqual({
      node_id: null,
      pot_id: "p",
      pot_type: "cowrie",
      event_type: "log.stderr",
      ts: 1795309499000,
      src_ip: null,
      data: { line: "boom" },
    });
    expect(ok(env("NodeEvent", { Alarm: { description: "disk full" } }), ctx({ nodeId: 5n }))).toEqual({
      node_id: 5n,
      pot_id: null,
      pot_type: null,
      event_type: "node.alarm",
      ts: NOW,
      src_ip: null,
      data: { description: "disk full" },
    });
  });

  test("a Go node's PotLog is stored as the event it carries, as if the line had come flat", () => {
    const flatLines = sampleLines("cowrie-2.9-honeybee-output.jsonl").map((l) => parseEventLine(l) as Record<string, unknown>);
    const node = { node_id: BIG, pot_id: "cowrie-lab", pot_type: "cowrie" };
    for (const line of flatLines) {
      const flat = ok(line);
      const log = ok({ version: 2, message: { PotLog: goPotLog(line, node, NOW) } });
      // The same columns; data as the Go node carries it (its fields as strings, no nested values).
      expect(log).toEqual({ ...flat, node_id: BIG, data: goData(flat.data) });
    }
  });

  test("a PotLog's log_type: a dotted event id is the event type, a plain name is a process's output under log.", () => {
    const log = (log_type: string, data: unknown) => ok({ version: 2, message: { PotLog: { pot_id: "p", pot_type: "cowrie", log_type, data, timestamp: "2026-11-22T01:07:40Z" } } });
    expect(log("cowrie.login.failed", { src_ip: "203.0.113.7", username: "root", timestamp: "2026-11-22T01:07:41.947048Z" })).toEqual({
      node_id: null,
      pot_id: "p",
      pot_type: "cowrie",
      event_type: "cowrie.login.failed",
      ts: Date.parse("2026-11-22T01:07:41.947Z"),
      src_ip: "203.0.113.7",
      data: { username: "root" },
    });
    expect(log("stdout", { src_ip: "203.0.113.7", text: "x" })).toEqual({ node_id: null, pot_id: "p", pot_type: "cowrie", event_type: "log.stdout", ts: Date.parse("2026-11-22T01:07:40Z"), src_ip: "203.0.113.7", data: { text: "x" } });
    expect(["stderr", "stdout", "install", "x.", ".x", "log.stderr"].map((t) => log(t, "l").event_type)).toEqual(["log.stderr", "log.stdout", "log.install", "log.x.", "log..x", "log.stderr"]);
    // A src_ip unfit for the column stays in data, once.
    expect(log("cowrie.login.failed", { src_ip: "not an address" })).toMatchObject({ src_ip: null, data: { src_ip: "not an address" } });
  });

  test("PotEvent and PotLog without pot_type: the registry's kind of the pot, else the event id's prefix", () => {
    const potTypeOf = (nodeId: bigint | null, potId: string) => (nodeId === 7n && potId === "ssh-02" ? "cowrie" : null);
    const goEvent = goPotEvent({ eventid: "login.failed", message: "m", src_ip: "203.0.113.7", username: "root" }, { node_id: 7n, pot_id: "ssh-02" }, NOW);
    expect(ok({ version: 2, message: { PotEvent: goEvent } }, ctx({ potTypeOf }))).toMatchObject({ pot_id: "ssh-02", pot_type: "cowrie", event_type: "login.failed", src_ip: "203.0.113.7" });
    expect(ok({ version: 2, message: { PotEvent: { ...goEvent, pot_id: "other", event: "honnypotter.login.failed" } } }, ctx({ potTypeOf })).pot_type).toBe("honnypotter");
    expect(ok({ version: 2, message: { PotLog: { node_id: 7, pot_id: "ssh-02", log_type: "stderr", data: "l" } } }, ctx({ potTypeOf })).pot_type).toBe("cowrie");
    expect(ok({ version: 2, message: { PotLog: { node_id: 8, pot_id: "ssh-02", log_type: "stderr", data: "l" } } }, ctx({ potTypeOf })).pot_type).toBeNull();
    // The node that sent it, when the message does not say.
    expect(ok({ pot_id: "ssh-02", event: "x", timestamp: 1 }, ctx({ potTypeOf, nodeId: 7n })).pot_type).toBe("cowrie");
  });

  test("node_id: the event's own, else the sender's, else the registry's owner of the pot", () => {
    const nodeOfPot = (p: string) => (p === "known" ? 99n : null);
    expect(ok({ eventid: "a.b", pot_id: "known", node_id: 1 }, ctx({ nodeId: 2n, nodeOfPot })).node_id).toBe(1n);
    expect(ok({ eventid: "a.b", pot_id: "known" }, ctx({ nodeId: 2n, nodeOfPot })).node_id).toBe(2n);
    expect(ok({ eventid: "a.b", pot_id: "known" }, ctx({ nodeOfPot })).node_id).toBe(99n);
    expect(ok({ eventid: "a.b", pot_id: "unknown" }, ctx({ nodeOfPot })).node_id).toBeNull();
    expect(ok({ eventid: "a.b", node_id: "18446744073709551557" }).node_id).toBe(BIG);
  });

  test("timestamps: ISO, unix seconds, milliseconds, microseconds; missing or unreadable becomes the receive time", () => {
    expect(ok({ eventid: "a.b", timestamp: "2026-11-22T01:07:41.947048Z" }).ts).toBe(Date.parse("2026-11-22T01:07:41.947Z"));
    expect(ok({ eventid: "a.b", timestamp: 1795309499 }).ts).toBe(1795309499000);
    expect(ok({ eventid: "a.b", timestamp: 1795309499.5 }).ts).toBe(1795309499500);
    expect(ok({ eventid: "a.b", timestamp: 1795309499123 }).ts).toBe(1795309499123);
    expect(ok({ eventid: "a.b", timestamp: "1795309499" }).ts).toBe(1795309499000);
    expect(ok({ eventid: "a.b", timestamp: 1795309499123456 }).ts).toBe(1795309499123);
    expect(ok({ eventid: "a.b", time: 1795309499.25 }).ts).toBe(1795309499250);
    expect(ok({ eventid: "a.b" }).ts).toBe(NOW);
    const bad = ok({ eventid: "a.b", timestamp: "yesterday" });
    expect(bad.ts).toBe(NOW);
    expect(bad.data.timestamp).toBe("yesterday");
  });

  test("a time far off becomes the receive time, what the event said kept in data: before 2000, over 5 minutes ahead, older than the retention", () => {
    const at = (ms: number) => new Date(ms).toISOString();
    const MIN = 60_000;
    const DAY = 86_400_000;
    const times = (timestamp: unknown, maxAgeMs = 0) => {
      const e = ok({ eventid: "a.b", timestamp }, ctx({ maxAgeMs }));
      return { ts: e.ts, kept: e.data.timestamp };
    };
    expect(times("1970-01-01T00:00:01Z")).toEqual({ ts: NOW, kept: "1970-01-01T00:00:01Z" });
    expect(times(0)).toEqual({ ts: NOW, kept: 0 });
    expect(times("1999-12-31T23:59:59Z")).toEqual({ ts: NOW, kept: "1999-12-31T23:59:59Z" });
    expect(times("9999-12-31T23:59:59Z")).toEqual({ ts: NOW, kept: "9999-12-31T23:59:59Z" });
    expect(times(at(NOW + 6 * MIN))).toEqual({ ts: NOW, kept: at(NOW + 6 * MIN) });
    expect(times(at(NOW + 4 * MIN))).toEqual({ ts: NOW + 4 * MIN, kept: undefined });
    // A node's spool sent after hours away keeps its times; past the retention it would be deleted at once.
    expect(times(at(NOW - 20 * DAY))).toEqual({ ts: NOW - 20 * DAY, kept: undefined });
    expect(times(at(NOW - 6 * DAY), 7 * DAY)).toEqual({ ts: NOW - 6 * DAY, kept: undefined });
    expect(times(at(NOW - 8 * DAY), 7 * DAY)).toEqual({ ts: NOW, kept: at(NOW - 8 * DAY) });
    // Cowrie's `time` fallback stays in data as it was.
    expect(ok({ eventid: "a.b", time: 1 })).toMatchObject({ ts: NOW, data: { time: 1 } });
    // A Go node's PotLog: the honeypot's own time, cut from data when readable, is put back.
    const log = ok(goPotLog({ eventid: "cowrie.login.failed", timestamp: "1970-01-01T00:00:00.000001Z", src_ip: "203.0.113.7" }, { node_id: BIG, pot_id: "p", pot_type: "cowrie" }, NOW));
    expect(log).toMatchObject({ ts: NOW, data: { timestamp: "1970-01-01T00:00:00.000001Z" } });
  });

  test("parseTimestamp agrees with Date.parse on ISO forms", () => {
    for (const s of ["2026-11-22T01:07:41Z", "2026-11-22T01:07:41.9Z", "2026-11-22T01:07:41.99Z", "2026-11-22T01:07:41.9999Z", "2026-11-22T01:07:41+02:00", "2026-11-22T01:07:41.5-01:30"]) {
      expect(parseTimestamp(s)).toBe(Date.parse(s));
    }
    expect(parseTimestamp("2026-11-22T01:07:41")).toBe(Date.parse("2026-11-22T01:07:41Z"));
    expect(parseTimestamp(-5)).toBeNull();
    expect(parseTimestamp({})).toBeNull();
  });

  test("parseTimestamp reads ISO 8601, RFC 2822 and unix time only, not whatever Date.parse makes of text", () => {
    for (const s of ["x 1", "' OR '1'='1", "1 2 3", "Nov 22 2026", "2026-11-22T01:07:41Zjunk", "\u0000", ""]) expect(parseTimestamp(s)).toBeNull();
    expect(parseTimestamp("2026-11-22")).toBe(Date.UTC(2026, 10, 22));
    expect(parseTimestamp("2026-11-22 01:07:41")).toBe(Date.UTC(2026, 10, 22, 1, 7, 41));
    expect(parseTimestamp("2026-11-22T01:07:41+0200")).toBe(Date.UTC(2026, 10, 21, 23, 7, 41));
    expect(parseTimestamp("Sun, 22 Nov 2026 01:04:59 GMT")).toBe(Date.UTC(2026, 10, 22, 1, 4, 59));
    expect(parseTimestamp("22 Nov 2026 01:04:59 +0100")).toBe(Date.UTC(2026, 10, 22, 0, 4, 59));
  });

  test("parseTimestampIn reads text where it stands in a line as parseTimestamp reads it cut out", () => {
    const forms = [
      "2026-11-22T01:07:41Z",
      "2026-11-22T01:07:41.947Z",
      "2026-11-22T01:07:41.947123Z",
      "2026-11-22T01:07:42.5Z", // the next second: the remembered prefix changes
      "2026-11-22T01:07:41.9x7Z",
      "2026-11-22T01:07:41Zjunk",
      "2026-11-22T01:07:41+02:00",
      "2026-11-22 01:07:41",
      "1969-12-31T23:59:59Z", // before the epoch: refused
      "2026-13-22T01:07:41Z",
      "1795309499.25",
      "Sun, 22 Nov 2026 01:04:59 GMT",
      "yesterday",
      "",
    ];
    for (const pad of ["", "x", '{"timestamp":"']) {
      for (const f of forms) {
        const line = `${pad}${f}","rest":1}`;
        expect([f, parseTimestampIn(line, pad.length, pad.length + f.length)]).toEqual([f, parseTimestamp(f)]);
      }
    }
  });

  test("isoTime writes what toISOString writes", () => {
    for (const ms of [0, 999, 1000, 1795309661947, 1795309661001, 1795309661010, 1795309662000, 253402300799999]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
  });

  test("an unusable src_ip stays in data and the column is null", () => {
    const e = ok({ eventid: "a.b", src_ip: "1.2.3.4\nx" });
    expect(e.src_ip).toBeNull();
    expect(e.data.src_ip).toBe("1.2.3.4\nx");
  });

  test("what is not an event is refused with a reason", () => {
    const refuse = (v: unknown) => {
      const r = normalise(v, ctx());
      expect(r.ok).toBe(false);
      return r.ok ? "" : r.error;
    };
    expect(refuse([1, 2])).toContain("JSON object");
    expect(refuse("x")).toContain("JSON object");
    expect(refuse({ hello: 1 })).toContain("not an event");
    expect(refuse({ eventid: "" })).toContain("event type");
    expect(refuse({ eventid: "a.b", node_id: -1 })).toContain("node_id");
    expect(refuse({ eventid: "a.b", node_id: 2 ** 64 })).toContain("node_id");
    expect(refuse({ eventid: "a.b", pot_id: { x: 1 } })).toContain("pot_id");
    expect(refuse({ version: 3, message: { PotEvent: {} } })).toContain("version");
    expect(refuse({ version: 2, message: { NodeRegistration: {} } })).toContain("unknown or unexpected");
    expect(refuse({ version: 2, message: { NodeEvent: "Started" } })).toContain("EventStreamHello");
  });

  test("an envelope is an integer version and a one-key message naming a kind; any other object is a honeypot's", () => {
    // The relay decides with the same function (protocol/classify.ts).
    const own = { event_type: "web.request", version: "HTTP/1.1", message: { path: "/", status: 200 } };
    expect(normalise(own, ctx())).toMatchObject({ ok: true, event: { event_type: "web.request", data: { version: "HTTP/1.1", message: { path: "/", status: 200 } } } });
    expect(normalise({ eventid: "x.a", version: 2, message: { PotEvent: {}, text: "t" } }, ctx())).toMatchObject({ ok: true, event: { event_type: "x.a" } });
    expect(normalise({ eventid: "x.b", version: 2.5, message: { PotEvent: {} } }, ctx())).toMatchObject({ ok: true, event: { event_type: "x.b" } });
    expect(normalise({ eventid: "x.c", version: 2, message: { toString: {} } }, ctx())).toMatchObject({ ok: true, event: { event_type: "x.c" } });
    // An envelope even with an eventid beside it: both sides of the relay read it so.
    expect(normalise({ eventid: "x.d", version: 2, message: { PotLog: { log_type: "stderr", data: "l" } } }, ctx())).toMatchObject({ ok: true, event: { event_type: "log.stderr" } });
  });
});

describe("parseEventLine keeps u64 node ids exact", () => {
  test("the one node_id of a line, at the top or in an envelope", () => {
    expect((parseEventLine('{"eventid":"a","node_id":18446744073709551557}') as any).node_id).toBe(BIG);
    expect((parseEventLine('{"version":2,"message":{"PotEvent":{"node_id": 18446744073709551557,"event_type":"x"}}}') as any).message.PotEvent.node_id).toBe(BIG);
    expect((parseEventLine('{"eventid":"a","node_id":42}') as any).node_id).toBe(42n);
  });

  test("several or nested node_ids take the exact reviver", () => {
    const v = parseEventLine('{"eventid":"a","node_id":18446744073709551557,"data":{"node_id":18446744073709551556}}') as any;
    expect(v.node_id).toBe(BIG);
    expect(v.data.node_id).toBe(18446744073709551556n);
  });

  test("not JSON throws", () => {
    expect(() => parseEventLine("{nope")).toThrow();
  });
});
