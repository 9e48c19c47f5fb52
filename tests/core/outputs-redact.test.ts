import { describe, expect, test } from "bun:test";
import { parseOutput } from "../../src/modules/outputs/model";
import { redactDefinition, redactText, redactUrl, textRedactor } from "../../src/modules/outputs/redact";

const def = (raw: unknown) => {
  const p = parseOutput(raw);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

describe("redactUrl", () => {
  const cases: [string, string][] = [
    ["https://soar.example.org/hooks/honeybee", "https://soar.example.org/hooks/honeybee"],
    ["mqtt://127.0.0.1:1883", "mqtt://127.0.0.1:1883"],
    ["mqtt://user:pw@broker.example.org:1883", "mqtt://(set)@broker.example.org:1883"],
    ["https://ghp_token@api.example.org/x", "https://(set)@api.example.org/x"],
    ["mqtt://u:p@ss@h:1883/", "mqtt://(set)@h:1883/"],
    ["user:pass@nats.example.org:4222", "(set)@nats.example.org:4222"],
    [
      "https://h.example.org/p?api_key=a&team=blue&access_token=b&code=c&X-Amz-Signature=d&apikey=e&password=f&secret=g&sig=h&empty=&flag",
      "https://h.example.org/p?api_key=(set)&team=blue&access_token=(set)&code=(set)&X-Amz-Signature=(set)&apikey=(set)&password=(set)&secret=(set)&sig=(set)&empty=&flag",
    ],
    ["https://h.example.org/p#access_token=x", "https://h.example.org/p#(set)"],
    ["https://chat.example.org/hooks/8j3k2m1n0p9q8r7s6t5u4v3w2x", "https://chat.example.org/hooks/(set)"],
    ["https://h.example.org/in?id=8j3k2m1n0p9q8r7s6t5u4v3w2x", "https://h.example.org/in?id=(set)"],
    ["https://hooks.slack.com/services/T000/B000/XXXX", "https://hooks.slack.com/(set)"],
    ["https://discord.com/api/webhooks/123/abc", "https://discord.com/(set)"],
    ["https://example.webhook.office.com/webhookb2/a@b/IncomingWebhook/c/d", "https://example.webhook.office.com/(set)"],
    ["https://prod-00.westus.logic.azure.com:443/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0", "https://prod-00.westus.logic.azure.com:443/(set)"],
    ["https://chat.googleapis.com/v1/spaces/AAA/messages?key=k&token=t", "https://chat.googleapis.com/(set)"],
    ["https://evil-hooks.slack.com.example.org/services/x", "https://evil-hooks.slack.com.example.org/services/x"],
  ];
  test("hides user info, secret-looking parameters and generated keys; a chat webhook's URL whole", () => {
    expect(cases.map(([url]) => redactUrl(url))).toEqual(cases.map(([, shown]) => shown));
  });

  test("whole: everything after the host is the secret", () => {
    expect([redactUrl("https://chat.example.org/hooks/abc", true), redactUrl("https://u:p@chat.example.org", true)]).toEqual(["https://chat.example.org/(set)", "https://(set)@chat.example.org"]);
  });

  test("hiding twice changes nothing", () => {
    expect(cases.map(([, shown]) => redactUrl(shown))).toEqual(cases.map(([, shown]) => shown));
  });
});

describe("redactText", () => {
  test("hides the URLs in a message and keeps the punctuation around them", () => {
    expect(
      [
        "cannot connect to mqtt://u:p@h:1883: connect ECONNREFUSED 127.0.0.1:1883",
        "(see https://h.example.org/x?token=abc).",
        "cannot connect to nats://u:p@h1:4222, nats://h2:4222: refused",
        "no hook at http://127.0.0.1:9/hook?token=(set)&team=blue",
        "nothing to hide here: 127.0.0.1:1883",
      ].map(redactText),
    ).toEqual([
      "cannot connect to mqtt://(set)@h:1883: connect ECONNREFUSED 127.0.0.1:1883",
      "(see https://h.example.org/x?token=(set)).",
      "cannot connect to nats://(set)@h1:4222, nats://h2:4222: refused",
      "no hook at http://127.0.0.1:9/hook?token=(set)&team=blue",
      "nothing to hide here: 127.0.0.1:1883",
    ]);
  });
});

describe("a definition's credentials", () => {
  test("GET shows URLs hidden and secret fields as (set)", () => {
    const shown = [
      def({ name: "s", type: "webhook", preset: "slack", url: "https://chat.example.org/hooks/abc", secret: "k" }),
      def({ name: "n", type: "nats", servers: ["nats://u:p@a:4222", "nats://b:4222"], token: "t" }),
      def({ name: "m", type: "mqtt", url: "mqtts://u:p@broker:8883", password: "p" }),
      def({ name: "f", type: "file", path: "/var/log/x.ndjson" }),
    ].map(redactDefinition);
    expect(shown.map((d: any) => [d.url ?? d.servers ?? d.path, d.secret ?? d.token ?? d.password ?? null])).toEqual([
      ["https://chat.example.org/(set)", "(set)"],
      [["nats://(set)@a:4222", "nats://b:4222"], "(set)"],
      ["mqtts://(set)@broker:8883", "(set)"],
      ["/var/log/x.ndjson", null],
    ]);
  });

  test("error text about an output loses its credentials in whatever form they come", () => {
    const mqtt = textRedactor(def({ name: "m", type: "mqtt", url: "mqtt://al%40ice:s3cr3t%2Fpw@broker:1883", password: "fieldpass" }));
    expect(mqtt("auth failed for al@ice with s3cr3t/pw (fieldpass) at mqtt://al%40ice:s3cr3t%2Fpw@broker:1883/")).toBe("auth failed for (set) with (set) ((set)) at mqtt://(set)@broker:1883/");
    const slack = textRedactor(def({ name: "s", type: "webhook", preset: "slack", url: "https://chat.example.org/services/T1/B1/SECRETVALUE" }));
    expect(slack("404 for /services/T1/B1/SECRETVALUE at https://chat.example.org/services/T1/B1/SECRETVALUE")).toBe("404 for (set) at https://chat.example.org/(set)");
    const hook = textRedactor(def({ name: "h", type: "webhook", url: "https://h.example.org/x", headers: { authorization: "Bearer abcdef" } }));
    expect(hook("rejected Bearer abcdef")).toBe("rejected (set)");
  });
});
