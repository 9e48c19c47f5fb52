/**
 * Output definitions (docs/outputs.md): one TypeBox schema per output type feeds validation
 * (config file and REST), the types and the OpenAPI document.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";

export const NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";
export const Name = Type.String({ pattern: NAME_PATTERN, description: "Unique name (letters, digits, `.`, `_`, `-`; at most 64).", example: "siem" });

const Common = {
  name: Name,
  event_types: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
      maxItems: 64,
      default: ["*"],
      description:
        "Event types this output ships, `*` matching any characters (`cowrie.login.*`, `alert.*`); default `[\"*\"]`, every event. `[]` ships only the alerts of rules that name this output.",
    }),
  ),
  from: Type.Optional(
    Type.Union([Type.Literal("latest"), Type.Literal("earliest")], {
      default: "latest",
      description: "Where a new output starts: `latest` ships events committed from now on, `earliest` every stored event first.",
    }),
  ),
  batch_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 100, description: "Events per delivery at most." })),
  retry: Type.Optional(
    Type.Object(
      {
        min_backoff_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000, default: 500, description: "Wait after the first failure; doubled after each further one." })),
        max_backoff_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000, default: 60_000, description: "Longest wait between two attempts." })),
        max_attempts: Type.Optional(
          Type.Integer({ minimum: 0, default: 0, description: "Attempts per batch before it is skipped and counted as dropped; 0 (the default) never gives up, so nothing is lost." }),
        ),
      },
      { additionalProperties: false },
    ),
  ),
};

export const WebhookOutput = Type.Object(
  {
    ...Common,
    type: Type.Literal("webhook"),
    url: Type.String({ pattern: "^https?://", maxLength: 2048, description: "Where batches are POSTed." }),
    preset: Type.Optional(
      Type.Union([Type.Literal("json"), Type.Literal("slack"), Type.Literal("teams")], {
        default: "json",
        description: "Body format: `json` `{output, events:[...]}`, `slack` (incoming webhook `{text}`), `teams` (Workflows webhook, an Adaptive Card).",
      }),
    ),
    secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "Signs each body: `X-HoneyBee-Signature-256: sha256=<hex HMAC-SHA256 of the body>`." })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: "Extra request headers (an Authorization header, say)." })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000, description: "A request that has not answered in this time failed." })),
  },
  { additionalProperties: false },
);

export const SyslogOutput = Type.Object(
  {
    ...Common,
    type: Type.Literal("syslog"),
    host: Type.String({ minLength: 1, maxLength: 255 }),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "Default 514 (udp, tcp) or 6514 (tls)." })),
    protocol: Type.Optional(Type.Union([Type.Literal("udp"), Type.Literal("tcp"), Type.Literal("tls")], { default: "tcp", description: "RFC 5426 (UDP), RFC 6587 octet counting (TCP), RFC 5425 (TLS)." })),
    format: Type.Optional(Type.Union([Type.Literal("json"), Type.Literal("cef"), Type.Literal("leef")], { default: "json", description: "The message part: the event as JSON, ArcSight CEF or QRadar LEEF 2.0." })),
    facility: Type.Optional(Type.Integer({ minimum: 0, maximum: 23, default: 16, description: "Syslog facility number (16: local0)." })),
    hostname: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "HOSTNAME field; default this machine's name." })),
    tls_ca: Type.Optional(Type.String({ minLength: 1, description: "PEM CA file that signed the receiver's certificate (default: the system's)." })),
    tls_insecure: Type.Optional(Type.Boolean({ default: false, description: "Accept any certificate (testing only)." })),
  },
  { additionalProperties: false },
);

export const MqttOutput = Type.Object(
  {
    ...Common,
    type: Type.Literal("mqtt"),
    url: Type.String({ pattern: "^(mqtts?|wss?|tcp|ssl)://", maxLength: 2048, description: "Broker, e.g. `mqtt://127.0.0.1:1883` or `mqtts://broker:8883`." }),
    topic: Type.Optional(Type.String({ minLength: 1, maxLength: 512, default: "honeybee/events/{pot_type}/{event_type}", description: "Topic per event; `{event_type}`, `{pot_id}`, `{pot_type}`, `{node_id}` are filled in." })),
    qos: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1), Type.Literal(2)], { default: 1, description: "1 or 2: a batch counts as delivered once the broker acknowledged every message; 0: once written." })),
    retain: Type.Optional(Type.Boolean({ default: false })),
    username: Type.Optional(Type.String()),
    password: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String({ maxLength: 128 })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000, description: "Connecting or acknowledging a batch longer than this failed." })),
  },
  { additionalProperties: false },
);

export const NatsOutput = Type.Object(
  {
    ...Common,
    type: Type.Literal("nats"),
    servers: Type.Union([Type.String({ minLength: 1 }), Type.Array(Type.String({ minLength: 1 }), { minItems: 1 })], { description: "Server URL(s), e.g. `nats://127.0.0.1:4222`." }),
    subject: Type.Optional(Type.String({ minLength: 1, maxLength: 512, default: "honeybee.events.{event_type}", description: "Subject per event; `{event_type}`, `{pot_id}`, `{pot_type}`, `{node_id}` are filled in." })),
    user: Type.Optional(Type.String()),
    pass: Type.Optional(Type.String()),
    token: Type.Optional(Type.String()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000, default: 10_000, description: "Connecting or flushing a batch longer than this failed." })),
  },
  { additionalProperties: false },
);

export const FileOutput = Type.Object(
  {
    ...Common,
    type: Type.Literal("file"),
    path: Type.String({ minLength: 1, maxLength: 4096, description: "NDJSON file (Elastic Common Schema) that Filebeat, Vector or Fluent Bit tail." }),
    max_bytes: Type.Optional(Type.Integer({ minimum: 1024, default: 100 * 1024 * 1024, description: "Rotate when the file would grow past this size." })),
    max_age_ms: Type.Optional(Type.Integer({ minimum: 1000, default: 86_400_000, description: "Rotate a file this old (counted from its first line)." })),
    max_files: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000, default: 10, description: "Rotated files kept (oldest deleted first)." })),
    fsync: Type.Optional(Type.Boolean({ default: false, description: "fsync after each batch, before the position moves (survives a power cut, costs a disk flush per batch)." })),
  },
  { additionalProperties: false },
);

export const OUTPUT_SCHEMAS = { webhook: WebhookOutput, syslog: SyslogOutput, mqtt: MqttOutput, nats: NatsOutput, file: FileOutput } as const;
export type OutputType = keyof typeof OUTPUT_SCHEMAS;
export const OUTPUT_TYPES = Object.keys(OUTPUT_SCHEMAS) as OutputType[];

export const OutputDefinition = Type.Union([WebhookOutput, SyslogOutput, MqttOutput, NatsOutput, FileOutput], {
  description: "An output (docs/outputs.md): `type` webhook, syslog, mqtt, nats or file, and that type's fields.",
  example: { name: "siem", type: "syslog", host: "siem.example.org", port: 514, protocol: "tcp", format: "cef", event_types: ["*"] },
});
export type WebhookOutput = Static<typeof WebhookOutput>;
export type SyslogOutput = Static<typeof SyslogOutput>;
export type MqttOutput = Static<typeof MqttOutput>;
export type NatsOutput = Static<typeof NatsOutput>;
export type FileOutput = Static<typeof FileOutput>;
export type OutputDefinition = Static<typeof OutputDefinition>;

/** The first problem with a value under a schema, as `/path message`. */
export function firstError(schema: TSchema, value: unknown): string | null {
  const e = Value.Errors(schema, value).First();
  return e ? `${e.path || "/"} ${e.message}` : null;
}

/**
 * Checks a definition and fills in its defaults; the problem in words when it is not one.
 * Checked against its own type's schema, so the message names the field rather than "no
 * member of the union matched".
 */
export function parseOutput(raw: unknown): { ok: true; value: OutputDefinition } | { ok: false; error: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, error: "an output is a JSON object with name and type" };
  const type = (raw as { type?: unknown }).type;
  if (typeof type !== "string" || !Object.hasOwn(OUTPUT_SCHEMAS, type)) return { ok: false, error: `type must be one of ${OUTPUT_TYPES.join(", ")}; got ${JSON.stringify(type)}` };
  const schema = OUTPUT_SCHEMAS[type as OutputType];
  const value = Value.Default(schema, structuredClone(raw));
  const err = firstError(schema, value);
  if (err) return { ok: false, error: `invalid ${type} output: ${err}` };
  return { ok: true, value: value as OutputDefinition };
}
