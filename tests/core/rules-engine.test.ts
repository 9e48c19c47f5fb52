import { describe, expect, test } from "bun:test";
import type { OutEvent } from "../../src/modules/outputs/event";
import { withGeo } from "../../src/modules/geo/committed";
import { RuleEngine } from "../../src/modules/rules/engine";
import { RuleError, compileMatch } from "../../src/modules/rules/match";
import { parseRule, type AlertRule } from "../../src/modules/rules/model";
import { MAX_PROGRAM, MAX_TEXT } from "../../src/modules/rules/regex";

const T0 = Date.parse("2026-11-23T04:00:00Z");
let nextId = 1;
const ev = (o: Partial<OutEvent> = {}): OutEvent => ({
  id: nextId++,
  ts: T0,
  node_id: 7n,
  pot_id: "ssh-01",
  pot_type: "cowrie",
  event_type: "cowrie.login.failed",
  src_ip: "203.0.113.7",
  data: {},
  ...o,
});

function rule(raw: unknown): AlertRule {
  const p = parseRule(raw);
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

function engine(...raw: unknown[]) {
  const seen = new Set<string>();
  const e = new RuleEngine({ has: (r, v) => seen.has(`${r}\0${v}`), add: (r, v) => seen.add(`${r}\0${v}`) });
  e.setRules(raw.map(rule));
  return e;
}
const fired = (e: RuleEngine, events: OutEvent[]) => events.flatMap((x) => e.evaluate(x).map((a) => `${a.rule.name}@${a.event.id}`));

describe("rule conditions", () => {
  const m = (match: AlertRule["match"]) => compileMatch(match);

  test("event type, pot and node patterns", () => {
    expect(m({ event_type: "*.login.success" })(ev({ event_type: "cowrie.login.success" }))).toBe(true);
    expect(m({ event_type: "*.login.success" })(ev())).toBe(false);
    expect(m({ event_type: ["a", "cowrie.login.*"] })(ev())).toBe(true);
    expect(m({ pot_id: "ssh-*", pot_type: "cowrie" })(ev())).toBe(true);
    expect(m({ pot_id: "web-*" })(ev())).toBe(false);
    expect(m({ node_id: "7" })(ev())).toBe(true);
    expect(m({ node_id: ["18446744073709551557"] })(ev({ node_id: 18446744073709551557n }))).toBe(true);
    expect(m({ node_id: "8" })(ev())).toBe(false);
  });

  test("source address or CIDR, IPv4 and IPv6", () => {
    const inNets = m({ src_ip: ["203.0.113.0/24", "2001:db8::/32", "198.51.100.9"] });
    expect(["203.0.113.7", "2001:db8::1", "198.51.100.9", "198.51.100.10", "192.0.2.1", "not-an-ip"].map((ip) => inNets(ev({ src_ip: ip })))).toEqual([true, true, true, false, false, false]);
    expect(inNets(ev({ src_ip: null }))).toBe(false);
    expect(() => m({ src_ip: "203.0.113.0/33" })).toThrow(RuleError);
    expect(() => m({ src_ip: "nope" })).toThrow('src_ip: "nope" is not an address or CIDR block');
  });

  test("a field's value or regex", () => {
    const fetches = m({ fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] });
    expect(["wget http://x/y", "cd /tmp; curl -O x", "tftp -g 1.2.3.4", "uname -a", "wgetx"].map((input) => fetches(ev({ data: { input } })))).toEqual([true, true, true, false, false]);
    expect(fetches(ev())).toBe(false);
    expect(m({ fields: [{ field: "data.username", equals: "root" }] })(ev({ data: { username: "root" } }))).toBe(true);
    expect(m({ fields: [{ field: "data.dst_port", equals: 22 }] })(ev({ data: { dst_port: "22" } }))).toBe(true);
    expect(m({ fields: [{ field: "data.a.b", equals: "x" }] })(ev({ data: { a: { b: "x" } } }))).toBe(true);
    expect(m({ fields: [{ field: "data.username", regex: "^ROOT$", ignore_case: true }] })(ev({ data: { username: "root" } }))).toBe(true);
    expect(() => m({ fields: [{ field: "data.input", regex: "(wget" }] })).toThrow("data.input: invalid regular expression: missing closing ): `(wget`");
    expect(() => m({ fields: [{ field: "data.input" }] })).toThrow("needs equals or regex");
  });

  test("regexes run on RE2: its syntax, case folding, and bounds on the pattern and the text", () => {
    const input = (regex: string, ignore_case = false) => (text: string) => m({ fields: [{ field: "data.input", regex, ignore_case }] })(ev({ data: { input: text } }));
    expect(["WGET x", "wget x", "Wgetx"].map(input("^wget\\b", true))).toEqual([true, true, false]);
    expect(["WGET x", "wget x"].map(input("(?i)^wget\\b"))).toEqual([true, true]);
    expect(["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "cat passwd"].map(input("^(\\w+\\s?)*$"))).toEqual([false, true]);
    const wget = input("wget");
    expect([`${" ".repeat(MAX_TEXT - 4)}wget`, `${" ".repeat(MAX_TEXT - 3)}wget`].map(wget)).toEqual([true, false]);
    expect(() => m({ fields: [{ field: "data.input", regex: "[a-f0-9]{64}" }] })).not.toThrow();
    expect(() => m({ fields: [{ field: "data.input", regex: "\\w{500}\\s\\w{500}" }] })).toThrow(`fields: data.input: the pattern compiles to 1003 RE2 instructions, more than ${MAX_PROGRAM} (a repetition x{n} counts n times)`);
    expect(() => m({ fields: [{ field: "data.input", regex: "\\uFFFF" }] })).toThrow("invalid regular expression: invalid escape sequence: `\\u`");
  });

  test("country and ASN read geo, and match nothing without it", () => {
    const cn = m({ country: "CN", asn: [4134, 4837] });
    expect(cn(ev({ geo: { country: "CN", asn: 4134, as_org: "Chinanet" } }))).toBe(true);
    expect(cn(ev({ geo: { country: "US", asn: 4134, as_org: null } }))).toBe(false);
    expect(cn(ev())).toBe(false);
  });
});

describe("rule engine", () => {
  test("a rule fires once per cool-down per source address, by the events' time", () => {
    const e = engine({ name: "login", match: { event_type: "*.login.success" }, cooldown_ms: 60_000 });
    const ok = (ts: number, src_ip = "203.0.113.7") => ev({ event_type: "cowrie.login.success", ts: T0 + ts, src_ip });
    const events = [ok(0), ok(1000), ok(59_999), ok(5000, "198.51.100.1"), ev({ ts: T0 + 70_000 }), ok(60_000), ok(61_000)];
    expect(fired(e, events)).toEqual([`login@${events[0]!.id}`, `login@${events[3]!.id}`, `login@${events[5]!.id}`]);
    expect(e.suppressed()).toEqual({ login: 3 });
  });

  test("a threshold: N matching events from one address within T, then counting starts afresh", () => {
    const e = engine({ name: "brute", match: { event_type: "*.login.failed" }, threshold: { count: 3, window_ms: 10_000 }, cooldown_ms: 0 });
    const f = (ts: number, src_ip = "203.0.113.7") => ev({ ts: T0 + ts, src_ip });
    const events = [f(0), f(1000), f(1000, "198.51.100.1"), f(20_000), f(21_000), f(22_000), f(23_000), f(24_000), f(25_000)];
    const alerts = events.flatMap((x) => e.evaluate(x));
    expect(alerts.map((a) => [a.event.id, a.count, a.reason])).toEqual([
      [events[5]!.id, 3, "3 matching events from 203.0.113.7 within 10000 ms"],
      [events[8]!.id, 3, "3 matching events from 203.0.113.7 within 10000 ms"],
    ]);
  });

  test("a new value fires once per value, ever", () => {
    const e = engine({ name: "new-asn", new_value: "geo.asn" });
    const events = [ev({ geo: { country: null, asn: 4134, as_org: null } }), ev({ geo: { country: null, asn: 4134, as_org: null } }), ev({ geo: { country: null, asn: 15169, as_org: null } }), ev(), ev({ geo: { country: null, asn: 4134, as_org: null } })];
    expect(e.evaluate(events[0]!)[0]!.reason).toBe("new geo.asn 4134");
    expect(fired(e, events.slice(1))).toEqual([`new-asn@${events[2]!.id}`]);
  });

  test("changing the rule set keeps the state of unchanged rules", () => {
    const a = { name: "a", match: { event_type: "x" } };
    const e = engine(a);
    expect(fired(e, [ev({ event_type: "x" })])).toHaveLength(1);
    e.setRules([rule(a), rule({ name: "b" })]);
    // "a" is still cooling down for this address; "b" is new.
    const next = ev({ event_type: "x" });
    expect(fired(e, [next])).toEqual([`b@${next.id}`]);
  });
});

test("with enrichment plugged in (withGeo), events carry geo and country and ASN rules match", async () => {
  const stored = [ev({ src_ip: "198.51.100.1" }), ev({ src_ip: "203.0.113.7" }), ev({ src_ip: null })];
  const source = withGeo({ lastId: () => stored.length, after: (p, n) => stored.slice(p, p + n) }, (ip) => (ip === "203.0.113.7" ? { country: "CN", asn: 4134, as_org: "Chinanet" } : null));
  const events = await source.after(0, 10);
  expect(events.map((e) => e.geo ?? null)).toEqual([null, { country: "CN", asn: 4134, as_org: "Chinanet" }, null]);
  const e = engine({ name: "cn", match: { country: "cn" } }, { name: "new-asn", new_value: "geo.asn" });
  expect(fired(e, events)).toEqual([`cn@${events[1]!.id}`, `new-asn@${events[1]!.id}`]);
});
