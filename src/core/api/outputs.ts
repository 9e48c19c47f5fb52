/**
 * Outputs and alert rules over REST (docs/outputs.md). Reads need the read role, changes the
 * operator role (as every non-GET request). Definitions are checked against their type's own
 * schema, so an error names the field; credentials in definitions are never shown.
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { OutputDefinition } from "../outputs/model";
import type { Outputs } from "../outputs";
import { AlertRule } from "../rules/model";
import type { Rules } from "../rules";
import { ApiError, errorResponses, notFound } from "./errors";
import { noQuery } from "./query";

const ReaderFields = {
  state: t.Union([t.Literal("idle"), t.Literal("delivering"), t.Literal("retrying"), t.Literal("standby"), t.Literal("stopped")], {
    description: "idle: caught up; delivering; retrying: the last attempt failed (see last_error); standby: another instance of the cluster delivers (this one takes over when it is gone); stopped.",
  }),
  position: Type.Integer({ minimum: 0, description: "Id of the last event done with (persisted; a restart goes on after it)." }),
  lag: Type.Integer({ minimum: 0, description: "Committed events after the position." }),
  delivered: Type.Integer({ minimum: 0, description: "Events delivered since Core started." }),
  failed: Type.Integer({ minimum: 0, description: "Failed delivery attempts since Core started (each is retried)." }),
  dropped: Type.Integer({ minimum: 0, description: "Events given up on after retry.max_attempts (0 unless that is set)." }),
  last_error: t.Union([t.String(), t.Null()], { description: "Why the last attempt failed; null once one succeeds." }),
  last_delivery_at: t.Union([t.String(), t.Null()], { description: "When a batch was last delivered (ISO 8601)." }),
};

export const OutputStatus = t.Object(
  { name: t.String(), type: t.String(), origin: t.Union([t.Literal("config"), t.Literal("api")]), ...ReaderFields },
  {
    example: { name: "siem", type: "syslog", origin: "config", state: "idle", position: 10_482_113, lag: 0, delivered: 61_204, failed: 3, dropped: 0, last_error: null, last_delivery_at: "2026-11-23T04:10:00.000Z" },
  },
);

export const RulesStatus = t.Object(
  {
    ...ReaderFields,
    alerts: Type.Integer({ minimum: 0, description: "Alerts raised since Core started." }),
    suppressed: t.Record(t.String(), Type.Integer({ minimum: 0 }), { description: "Per rule: alerts a cool-down held back since Core started." }),
  },
  { description: "The alert rules' reader." },
);

const OutputInfo = t.Object(
  {
    definition: OutputDefinition,
    origin: t.Union([t.Literal("config"), t.Literal("api")], { description: "config: from the config file (removed there); api: defined over REST." }),
    status: OutputStatus,
  },
  {
    description:
      "An output, its credentials shown as `(set)`: `secret`, `password`, `pass`, `token`, header values, and in `url` and `servers` the user info, secret-looking query values " +
      "(`key`, `token`, `sig`, ...) and generated keys; a chat webhook's URL (Slack, Teams, Discord, or `preset` slack or teams) shows only its host. `last_error` hides them the same way.",
  },
);

const RuleInfo = t.Object({ rule: AlertRule, origin: t.Union([t.Literal("config"), t.Literal("api")]) });

const OUTPUT_EXAMPLES = {
  webhook: { summary: "Signed JSON webhook", value: { name: "soar", type: "webhook", url: "https://soar.example.org/hooks/honeybee", secret: "change-me", event_types: ["cowrie.login.*", "alert.*"] } },
  slack: { summary: "Slack, alerts only", value: { name: "slack", type: "webhook", preset: "slack", url: "https://hooks.slack.com/services/T000/B000/XXXX", event_types: [] } },
  syslog: { summary: "Syslog over TCP, CEF", value: { name: "siem", type: "syslog", host: "siem.example.org", port: 514, protocol: "tcp", format: "cef" } },
  mqtt: { summary: "MQTT", value: { name: "mqtt", type: "mqtt", url: "mqtt://127.0.0.1:1883", topic: "honeybee/events/{pot_type}/{event_type}" } },
  nats: { summary: "NATS", value: { name: "nats", type: "nats", servers: "nats://127.0.0.1:4222" } },
  file: { summary: "ECS NDJSON file for Filebeat", value: { name: "ecs", type: "file", path: "./data/ecs/events.ndjson", max_bytes: 104857600, max_files: 10 } },
};

const RULE_EXAMPLES = {
  login: { summary: "Any successful login", value: { name: "successful-login", severity: "high", match: { event_type: ["*.login.success"] }, cooldown_ms: 600000, outputs: ["slack"] } },
  fetch: {
    summary: "A command fetching something",
    value: { name: "download-command", severity: "high", match: { event_type: "cowrie.command.input", fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] }, outputs: ["slack"] },
  },
  brute: { summary: "20 failed logins from one address in a minute", value: { name: "brute-force", match: { event_type: "*.login.failed" }, threshold: { count: 20, window_ms: 60000 }, cooldown_ms: 3600000, outputs: ["slack"] } },
  asn: { summary: "A network never seen before", value: { name: "new-asn", severity: "low", new_value: "geo.asn", outputs: ["slack"] } },
};

const fail = (r: { status: number; code: string; message: string }) => new ApiError(r.status, r.code, r.message);

export const outputsApi = (outputs: Outputs, rules: Rules) =>
  new Elysia({ name: "outputs" })
    .get(
      "/api/v1/outputs",
      ({ request }) => {
        noQuery(request.url);
        return { outputs: outputs.list() };
      },
      { response: { 200: t.Object({ outputs: t.Array(OutputInfo) }) }, detail: { tags: ["Outputs"], summary: "List outputs with their delivery state" } },
    )
    .get(
      "/api/v1/outputs/:name",
      ({ params, request }) => {
        noQuery(request.url);
        const o = outputs.get(params.name);
        if (!o) throw notFound(`output ${params.name} does not exist`);
        return o;
      },
      { response: { 200: OutputInfo, ...errorResponses({ 404: ["not_found", "output siem does not exist"] }) }, detail: { tags: ["Outputs"], summary: "Get one output" } },
    )
    .post(
      "/api/v1/outputs",
      async ({ body, request, set }) => {
        noQuery(request.url);
        const r = await outputs.add(body);
        if (!r.ok) throw fail(r);
        set.status = 201;
        return outputs.get((body as { name: string }).name)!;
      },
      {
        response: {
          201: OutputInfo,
          ...errorResponses({ 400: ["bad_request", "invalid syslog output: /host Expected required property"], 409: ["conflict", "an output named siem exists already"] }),
        },
        detail: {
          tags: ["Outputs"],
          summary: "Add an output",
          description:
            "Starts shipping at once (from the newest event, or every stored one with `from: earliest`) and is kept across restarts. " +
            "The definition is checked against its type's schema: 400 names the field. 409 when the name is taken. docs/outputs.md describes each type and the guarantee it gives.",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: OutputDefinition as any, examples: OUTPUT_EXAMPLES }) } },
        },
      },
    )
    .delete(
      "/api/v1/outputs/:name",
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await outputs.remove(params.name);
        if (!r.ok) throw fail(r);
        return { deleted: params.name };
      },
      {
        response: { 200: t.Object({ deleted: t.String() }), ...errorResponses({ 404: ["not_found", "output siem does not exist"], 409: ["conflict", "output siem is defined in the config file; remove it there"] }) },
        detail: { tags: ["Outputs"], summary: "Remove an output", description: "Stops it and forgets its position. Outputs of the config file are removed there (409)." },
      },
    )
    .get(
      "/api/v1/rules",
      ({ request }) => {
        noQuery(request.url);
        return { rules: rules.list(), status: rules.status() };
      },
      { response: { 200: t.Object({ rules: t.Array(RuleInfo), status: RulesStatus }) }, detail: { tags: ["Rules"], summary: "List alert rules" } },
    )
    .get(
      "/api/v1/rules/:name",
      ({ params, request }) => {
        noQuery(request.url);
        const r = rules.get(params.name);
        if (!r) throw notFound(`rule ${params.name} does not exist`);
        return r;
      },
      { response: { 200: RuleInfo, ...errorResponses({ 404: ["not_found", "rule successful-login does not exist"] }) }, detail: { tags: ["Rules"], summary: "Get one alert rule" } },
    )
    .post(
      "/api/v1/rules",
      async ({ body, request, set }) => {
        noQuery(request.url);
        // A misspelt output name would drop the rule's alerts without a word.
        const routed = (body as { outputs?: unknown } | null)?.outputs;
        const unknown = Array.isArray(routed) ? routed.filter((n) => typeof n === "string" && !outputs.has(n)) : [];
        if (unknown.length > 0) throw new ApiError(400, "bad_request", `invalid rule: /outputs names no output: ${unknown.join(", ")}`);
        const r = await rules.add(body);
        if (!r.ok) throw fail(r);
        set.status = 201;
        return rules.get((body as { name: string }).name)!;
      },
      {
        response: {
          201: RuleInfo,
          ...errorResponses({ 400: ["bad_request", "invalid rule: fields: data.input: Invalid regular expression: /(wget/: Unterminated group"], 409: ["conflict", "a rule named successful-login exists already"] }),
        },
        detail: {
          tags: ["Rules"],
          summary: "Add an alert rule",
          description:
            "Applies from the next committed event on. An alert is stored as an event of type `alert.<rule>` (with the node, pot and source address of the event that raised it) " +
            "and shipped to the outputs the rule names. 400 names the problem (schema, regex, CIDR); 409 when the name is taken.",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: AlertRule as any, examples: RULE_EXAMPLES }) } },
        },
      },
    )
    .delete(
      "/api/v1/rules/:name",
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await rules.remove(params.name);
        if (!r.ok) throw fail(r);
        return { deleted: params.name };
      },
      {
        response: { 200: t.Object({ deleted: t.String() }), ...errorResponses({ 404: ["not_found", "rule brute-force does not exist"], 409: ["conflict", "rule brute-force is defined in the config file; remove it there"] }) },
        detail: { tags: ["Rules"], summary: "Remove an alert rule" },
      },
    );
