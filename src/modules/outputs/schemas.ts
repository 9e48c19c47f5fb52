/** Outputs' REST shapes (docs/outputs.md): a definition with its delivery state. */
import { Type } from "@sinclair/typebox";
import { OutputDefinition } from "./model";

/** A reader's delivery state (reader.ts ReaderStatus), shared by every output and the alert rules' reader. */
export const ReaderFields = {
  state: Type.Union([Type.Literal("idle"), Type.Literal("delivering"), Type.Literal("retrying"), Type.Literal("standby"), Type.Literal("stopped"), Type.Literal("paused")], {
    description:
      "idle: caught up; delivering; retrying: the last attempt failed (see last_error); standby: another instance of the cluster delivers (this one takes over when it is gone); stopped; " +
      "paused: paused over REST (an output keeps its position and goes on from it when resumed).",
  }),
  position: Type.Integer({ minimum: 0, description: "Id of the last event done with (persisted; a restart goes on after it)." }),
  lag: Type.Integer({ minimum: 0, description: "Committed events after the position." }),
  delivered: Type.Integer({ minimum: 0, description: "Events delivered since Core started." }),
  failed: Type.Integer({ minimum: 0, description: "Failed delivery attempts since Core started (each is retried)." }),
  dropped: Type.Integer({ minimum: 0, description: "Events given up on after retry.max_attempts (0 unless that is set)." }),
  last_error: Type.Union([Type.String(), Type.Null()], { description: "Why the last attempt failed; null once one succeeds." }),
  last_delivery_at: Type.Union([Type.String(), Type.Null()], { description: "When a batch was last delivered (ISO 8601)." }),
};

export const OutputStatus = Type.Object(
  { name: Type.String(), type: Type.String(), origin: Type.Union([Type.Literal("config"), Type.Literal("api")]), ...ReaderFields },
  {
    example: { name: "siem", type: "syslog", origin: "config", state: "idle", position: 10_482_113, lag: 0, delivered: 61_204, failed: 3, dropped: 0, last_error: null, last_delivery_at: "2026-11-23T04:10:00.000Z" },
  },
);

export const OutputInfo = Type.Object(
  {
    definition: OutputDefinition,
    origin: Type.Union([Type.Literal("config"), Type.Literal("api")], { description: "config: from the config file (removed there); api: defined over REST." }),
    status: OutputStatus,
  },
  {
    description:
      "An output, its credentials shown as `(set)`: `secret`, `password`, `pass`, `token`, header values, and in `url` and `servers` the user info, secret-looking query values " +
      "(`key`, `token`, `sig`, ...) and generated keys; a chat webhook's URL (Slack, Teams, Discord, or `preset` slack or teams) shows only its host. `last_error` hides them the same way.",
  },
);

export const OUTPUT_EXAMPLES = {
  webhook: { summary: "Signed JSON webhook", value: { name: "soar", type: "webhook", url: "https://soar.example.org/hooks/honeybee", secret: "change-me", event_types: ["cowrie.login.*", "alert.*"] } },
  slack: { summary: "Slack, alerts only", value: { name: "slack", type: "webhook", preset: "slack", url: "https://hooks.slack.com/services/T000/B000/XXXX", event_types: [] } },
  syslog: { summary: "Syslog over TCP, CEF", value: { name: "siem", type: "syslog", host: "siem.example.org", port: 514, protocol: "tcp", format: "cef" } },
  mqtt: { summary: "MQTT", value: { name: "mqtt", type: "mqtt", url: "mqtt://127.0.0.1:1883", topic: "honeybee/events/{pot_type}/{event_type}" } },
  nats: { summary: "NATS", value: { name: "nats", type: "nats", servers: "nats://127.0.0.1:4222" } },
  file: { summary: "ECS NDJSON file for Filebeat", value: { name: "ecs", type: "file", path: "./data/ecs/events.ndjson", max_bytes: 104857600, max_files: 10 } },
};

export const OutputType = Type.Object(
  {
    type: Type.String({ description: "The output type, `type` in a definition.", example: "webhook" }),
    schema: Type.Object({}, { additionalProperties: true, description: "The type's definition as JSON Schema: each field's type, description, default, and which are `required`." }),
    secrets: Type.Array(Type.String(), {
      description: "Fields that hold credentials: write-only (GET shows `(set)`; in a PUT, left out or sent as `(set)` keeps the stored value). `headers`: its values.",
    }),
  },
  { additionalProperties: false },
);

export const OutputTypes = Type.Object({ types: Type.Array(OutputType) }, { description: "Each output type with its schema, for building a form (the console's) or checking a definition." });

export const TestResult = Type.Object(
  {
    name: Type.String(),
    delivered: Type.Boolean({ description: "The destination took the test event (as a delivery counts for this type: a 2xx answer, a broker's acknowledgement, a written line...)." }),
    error: Type.Union([Type.String(), Type.Null()], { description: "Why not, credentials hidden as in `last_error`." }),
    duration_ms: Type.Integer({ minimum: 0 }),
  },
  { example: { name: "soar", delivered: false, error: "HTTP 401 from soar.example.org: bad signature", duration_ms: 84 } },
);
