import { describe, expect, test } from "bun:test";
import { backoffMs } from "../../src/modules/outputs/backoff";
import type { OutEvent } from "../../src/modules/outputs/event";
import { toCef } from "../../src/modules/outputs/format/cef";
import { slackBody, teamsBody } from "../../src/modules/outputs/format/chat";
import { toEcs } from "../../src/modules/outputs/format/ecs";
import { toLeef } from "../../src/modules/outputs/format/leef";
import { octetCounted, toRfc5424 } from "../../src/modules/outputs/format/rfc5424";
import { parseOutput } from "../../src/modules/outputs/model";
import { redactDefinition as redact } from "../../src/modules/outputs/redact";
import { selector } from "../../src/modules/outputs/select";
import { fillTemplate } from "../../src/modules/outputs/sink";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { loadCoreConfig } from "../../src/config";
import { parseRule } from "../../src/modules/rules/model";
import { ROOT, getJson, startTestCore } from "../helpers";

const TS = Date.parse("2026-11-23T04:00:00.123Z");
const ev = (o: Partial<OutEvent> = {}): OutEvent => ({
  id: 42,
  ts: TS,
  node_id: 18446744073709551557n,
  pot_id: "ssh-01",
  pot_type: "cowrie",
  event_type: "cowrie.command.input",
  src_ip: "203.0.113.7",
  data: { input: 'echo "a=b|c\\d"\nid', src_port: 40022, session: "abc" },
  ...o,
});
const alert = ev({
  id: 43,
  event_type: "alert.download-command",
  data: { rule: "download-command", severity: "high", reason: "matched", count: 1, outputs: ["slack"], trigger: { id: 42, event_type: "cowrie.command.input", data: { input: "wget http://x/<y>&z" } } },
});

describe("RFC 5424", () => {
  test("header fields, structured data escaped, the message on one line", () => {
    const line = toRfc5424(ev({ pot_id: 'we]ird "pot"' }), { facility: 16, hostname: "core 1", format: "json" });
    expect(line).toStartWith(
      '<134>1 2026-11-23T04:00:00.123Z core_1 honeybee we]ird_"pot" cowrie.command.input [honeybee@32473 event_id="42" node_id="18446744073709551557" pot_id="we\\]ird \\"pot\\"" pot_type="cowrie" src_ip="203.0.113.7"] {"id":42,"node_id":18446744073709551557,',
    );
    expect(line).not.toContain("\n");
    expect(toRfc5424(alert, { facility: 4, hostname: "h", format: "json" })).toStartWith("<36>1 ");
    expect(toRfc5424(ev({ event_type: "x".repeat(40) }), { facility: 16, hostname: "h", format: "json" }).split(" ")[5]).toBe("x".repeat(32));
  });

  test("octet counting counts bytes", () => {
    expect(octetCounted("é")).toBe("2 é");
  });
});

describe("CEF and LEEF", () => {
  test("CEF escapes pipes and backslashes in the header, = and \\ and line breaks in extensions", () => {
    const cef = toCef(ev({ event_type: "a|b" }));
    expect(cef).toBe(
      `CEF:0|HoneyBee|HoneyBee Core|${pkg.version}|a\\|b|a\\|b|3|rt=${TS} src=203.0.113.7 spt=40022 externalId=42 deviceExternalId=18446744073709551557 cs1Label=pot_id cs1=ssh-01 cs2Label=pot_type cs2=cowrie cs4Label=command cs4=echo "a\\=b|c\\\\d"\\nid`,
    );
    expect(toCef(alert)).toContain("|alert.download-command|alert download-command|8|");
  });

  test("LEEF 2.0 with tab-separated attributes", () => {
    expect(toLeef(ev())).toBe(
      `LEEF:2.0|HoneyBee|HoneyBee Core|${pkg.version}|cowrie.command.input|x09|devTime=${TS}\tdevTimeFormat=epoch\tcat=cowrie.command.input\tsev=4\tsrc=203.0.113.7\tsrcPort=40022\tcommand=echo "a=b|c\\d"\\nid\teventId=42\tpotId=ssh-01\tpotType=cowrie\tnodeId=18446744073709551557`,
    );
  });
});

describe("ECS", () => {
  test("an alert is event.kind alert with its rule", () => {
    expect(toEcs(alert)).toMatchObject({ event: { kind: "alert", category: ["process"], action: "alert.download-command", severity: 73 }, rule: { name: "download-command" }, message: "matched" });
  });

  test("geo becomes source.geo and source.as once events carry it", () => {
    expect(toEcs(ev({ geo: { country: "CN", asn: 4134, as_org: "Chinanet" } }))).toMatchObject({ source: { ip: "203.0.113.7", geo: { country_iso_code: "CN" }, as: { number: 4134, organization: { name: "Chinanet" } } } });
    expect((toEcs(ev()).source as Record<string, unknown>).geo).toBeUndefined();
  });
});

describe("chat presets", () => {
  test("Slack text is escaped; a burst is cut to 20 lines", () => {
    expect(slackBody([alert])).toEqual({ text: "[high] download-command: matched from 203.0.113.7 on ssh-01 cowrie (cowrie.command.input: command wget http://x/&lt;y&gt;&amp;z)" });
    const many = slackBody(Array.from({ length: 25 }, () => ev())).text as string;
    expect(many.split("\n")).toHaveLength(21);
    expect(many.split("\n")[20]).toBe("... and 5 more");
    expect(many.split("\n")[0]).toBe('cowrie.command.input from 203.0.113.7 on ssh-01 cowrie: command echo "a=b|c\\d" ↵ id');
  });

  test("Teams gets an Adaptive Card", () => {
    const body = teamsBody([alert]) as any;
    expect(body.type).toBe("message");
    expect(body.attachments[0].contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(body.attachments[0].content.body[1]).toEqual({ type: "TextBlock", text: expect.stringContaining("[high] download-command"), wrap: true });
  });
});

describe("definitions and routing", () => {
  test("an output ships what its event types match, plus the alerts routed to it", () => {
    const alertsOnly = selector("slack", []);
    expect([ev(), alert, { ...alert, data: { ...alert.data, outputs: ["other"] } }].map(alertsOnly)).toEqual([false, true, false]);
    const logins = selector("siem", ["cowrie.login.*"]);
    expect([ev(), ev({ event_type: "cowrie.login.failed" }), alert].map(logins)).toEqual([false, true, false]);
    expect([ev(), alert].map(selector("all", ["*"]))).toEqual([true, true]);
  });

  test("topic and subject templates", () => {
    expect(fillTemplate("hb/{pot_type}/{event_type}/{node_id}", ev({ pot_type: null }), (s) => s.replace(/[+#/]/g, "_"))).toBe("hb/unknown/cowrie.command.input/18446744073709551557");
  });

  test("definitions are checked per type and credentials hidden", () => {
    expect(parseOutput({ name: "m", type: "mqtt", url: "http://x" })).toEqual({ ok: false, error: "invalid mqtt output: /url Expected string to match '^(mqtts?|wss?|tcp|ssl)://'" });
    const p = parseOutput({ name: "n", type: "nats", servers: "nats://h:4222", token: "t0k" });
    expect(p.ok && redact(p.value)).toMatchObject({ token: "(set)", servers: "nats://h:4222", subject: "honeybee.events.{event_type}" });
  });

  test("backoff doubles up to its cap, with jitter in the upper half", () => {
    const p = { minMs: 100, maxMs: 1000 };
    expect([1, 2, 3, 4, 5, 30].map((a) => backoffMs(a, p, 0.999999))).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect([1, 2, 5].map((a) => backoffMs(a, p, 0))).toEqual([50, 100, 500]);
  });
});

test("the sample config (docs/examples/outputs.json) is valid and starts", async () => {
  const path = join(ROOT, "docs", "examples", "outputs.json");
  const config = loadCoreConfig({ config: path }, {});
  expect(config.outputs.map((o) => parseOutput(o).ok)).toEqual(config.outputs.map(() => true));
  expect(config.rules.map((r) => parseRule(r).ok)).toEqual(config.rules.map(() => true));
  await using core = await startTestCore({ outputs: config.outputs.filter((o) => o.type === "webhook"), rules: config.rules });
  expect((await getJson(`${core.api}/api/v1/rules`)).body.rules.map((r: any) => r.rule.name)).toEqual(["successful-login", "download-command", "brute-force", "new-asn"]);
});
