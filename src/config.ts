/**
 * Core configuration: defaults < config file < HONEYBEE_* environment < command-line flags.
 * The merged result is validated once with TypeBox; a bad value stops start-up with a message
 * naming its key.
 */
import { Type, type Static, type TObject, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync, readFileSync } from "node:fs";
import { LOG_LEVELS } from "./log";
import { MAX_RECORDING_BYTES } from "./protocol/messages";

const TokenEntry = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64 }),
  role: Type.Union([Type.Literal("read"), Type.Literal("operator")]),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
});
export type TokenEntry = Static<typeof TokenEntry>;

const Port = (description: string, def: number) => Type.Integer({ minimum: 0, maximum: 65535, default: def, description });

export const CoreConfig = Type.Object({
  host: Type.String({ minLength: 1, default: "127.0.0.1", description: "Address every listener binds to." }),
  node_port: Port("Node control channel (Protocol v2 over TCP).", 9001),
  api_port: Port("REST API, OpenAPI, Swagger UI and the backend stream.", 9002),
  ws_port: Port("WebSocket proxy (live feed and commands).", 9003),
  event_port: Port("Event socket (NDJSON from nodes and honeypots).", 9100),
  db: Type.String({ minLength: 1, default: "./data/honeybee.db", description: "Where Core stores everything: an SQLite database file (`:memory:` for a throwaway one), or a PostgreSQL database as a URL `postgres://user[:password]@host:port/database` (docs/scale-out.md)." }),
  log_level: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { default: "info", description: "pino log level." }),
  log_events: Type.Boolean({
    default: true,
    description: "One structured log line per committed event (msg \"event\"); turn off (--log-events=false) for extreme rates: it costs about as much as parsing the event.",
  }),
  heartbeat_timeout_ms: Type.Integer({ minimum: 100, default: 90_000, description: "A node that sends nothing for this long becomes Unknown (three 30 s heartbeats)." }),
  max_message_bytes: Type.Integer({ minimum: 1024, default: 1024 * 1024, description: "Largest message on any socket." }),
  max_nesting_depth: Type.Integer({
    minimum: 2,
    maximum: 1000,
    default: 64,
    description: "Deepest nesting of objects and arrays in a message on 9001 and 9100 (the message itself is level 1); deeper messages are refused as `too_deep`.",
  }),
  batch_size: Type.Integer({ minimum: 1, maximum: 100_000, default: 16_384, description: "Events committed per transaction at most (a batch is sealed sooner when the writer is idle or after batch_delay_ms)." }),
  batch_delay_ms: Type.Integer({ minimum: 0, maximum: 10_000, default: 5, description: "Longest wait before a partial batch is committed." }),
  // Three batches: two at the writer (MAX_IN_FLIGHT in pipeline.ts) and the next filling. At a
  // batch and a half (24,576) reading paused while the writer still had room for a second
  // batch: with one producer 336,757-382,775 events/s against 417,537-451,671 at 49,152, in
  // interleaved runs, peak RSS within the same run-to-run spread (docs/benchmarks.md).
  max_pending_events: Type.Integer({ minimum: 1000, default: 49_152, description: "Events waiting for the writer before reading pauses (it resumes when half of them are committed)." }),
  // Past the data of 49,152 of the ingest bench's events (16-19 MiB), so it takes over only when
  // events are large: a flood of 4-16 KiB PotLogs on 9001 (`bun run bench flood`) peaked at
  // 435-918 MB with the count alone, 401-499 with 32 MiB; 16 MiB saved nothing more (423-448:
  // the rest is the engine's garbage, not held data; docs/benchmarks.md).
  max_pending_bytes: Type.Integer({
    minimum: 1024 * 1024,
    default: 32 * 1024 * 1024,
    description:
      "Bytes of event data waiting for the writer before reading pauses (it resumes when half of them are committed): bounds memory when events are large, as `max_pending_events` does when they are many. A batch is committed at a third of it at most.",
  }),
  retention_days: Type.Integer({ minimum: 0, default: 0, description: "Delete events older than this many days (0 keeps everything)." }),
  artifacts_dir: Type.String({
    default: "",
    description: "Folder of the artifacts (files attackers downloaded or uploaded, by SHA-256) and of partial transfers; empty: `artifacts` next to the database file. On PostgreSQL, which keeps the bytes itself, only the transfers under way (empty: `./data/artifacts`; docs/artifacts.md).",
  }),
  max_unfinished_recording_bytes: Type.Integer({
    minimum: MAX_RECORDING_BYTES,
    // 8 recordings of the largest size, 32 of cowrie's default 1 MiB (tty_max_bytes).
    default: 32 * 1024 * 1024,
    description:
      "Bytes of terminal recordings Core holds in memory while their chunks arrive, all nodes together, each counted at the size it announces (docs/protocol.md#sessionrecording). Past it a new recording is deferred: Core answers `ok: false` with `retry_after_ms`, logs `session recording deferred`, and the node keeps the recording and sends it again later.",
  }),
  artifact_max_bytes: Type.Integer({ minimum: 1024, default: 64 * 1024 * 1024, description: "Largest artifact Core takes from a node; larger offers are refused (`too_large`) and the node drops them." }),
  ingest_worker: Type.Boolean({
    default: true,
    description: "Write events from a worker thread with its own database connection, so parsing and writing use two cores (ignored for :memory: databases).",
  }),
  stats_flush_ms: Type.Integer({
    minimum: 0,
    maximum: 60_000,
    default: 5000,
    description: "How often the event writer writes the stats counters it keeps in memory (in bulk: less often is cheaper at high rates). A stats read has them written first, so it counts every committed event.",
  }),
  commit_stall_ms: Type.Integer({
    minimum: 1,
    default: 30_000,
    description:
      "How long received events may wait with no commit before `/health` answers 503 (a writer that hangs rather than fails: a stalled disk, a PostgreSQL server or NATS cluster that does not answer). Healthy again at the next commit.",
  }),
  shutdown_timeout_ms: Type.Integer({
    minimum: 0,
    default: 30_000,
    description:
      "On SIGTERM or Ctrl-C: how long Core keeps trying to commit the events it received (a full disk, a read-only file system) before it stops anyway, exit status 1. Those events were never acknowledged: nodes keep them and send them again.",
  }),
  ws_backpressure_bytes: Type.Integer({ minimum: 1024, default: 4 * 1024 * 1024, description: "Bytes queued for one WebSocket client before it is cut off." }),
  geo_enrichment: Type.Boolean({
    default: true,
    description:
      "Look up each source address's country, ASN and AS organisation (once per address, offline): `geo` on events, the `country`/`asn` filters, top countries and ASNs, indicators. Off saves the data's memory (~60 MB) and its loading time (~0.5 s at the first event).",
  }),
  geoip_db: Type.String({
    default: "",
    description:
      "MMDB file with countries (MaxMind GeoLite2-Country or GeoIP2) used instead of the shipped DB-IP Lite data for the events' `geo.country`; read once at start.",
  }),
  asn_db: Type.String({
    default: "",
    description: "MMDB file with ASNs (MaxMind GeoLite2-ASN) used instead of the shipped IP-to-ASN data for the events' `geo.asn` and `geo.as_org`; read once at start.",
  }),
  // ---- Several instances (docs/scale-out.md) ----
  bus: Type.String({
    default: "",
    description:
      "NATS servers with JetStream that join several Core instances into one deployment, comma-separated URLs (`nats://n1:4222,nats://n2:4222`); empty: one instance alone. Needs `db` on PostgreSQL.",
  }),
  cluster: Type.String({
    pattern: "^[A-Za-z0-9_-]{1,32}$",
    default: "honeybee",
    description: "Name of the deployment on the bus: the prefix of every subject, stream and consumer, so two deployments (or two test runs) share NATS servers without meeting.",
  }),
  roles: Type.String({
    pattern: "^(ingest|api|proxy|writer)(,(ingest|api|proxy|writer))*$",
    default: "ingest,api,proxy,writer",
    description:
      "What this instance does, a comma list: `ingest` (event socket and node control channel), `api` (REST), `proxy` (WebSocket live feed and commands), `writer` (stores events from the bus). Other than all four needs `bus`.",
  }),
  bus_replicas: Type.Integer({ minimum: 1, maximum: 5, default: 1, description: "Copies JetStream keeps of the event stream (3 on a three-server NATS cluster): events acknowledged to senders survive the loss of a server." }),
  // ---- Security (see README "Security") ----
  insecure: Type.Boolean({ default: false, description: "Allow a non-loopback host without authentication (a warning is logged)." }),
  tokens: Type.Array(TokenEntry, { default: [], description: "API tokens: {name, role: read|operator, sha256: hex SHA-256 of the token}." }),
  tokens_file: Type.String({ default: "", description: "JSON file with {\"tokens\": [...]} in the same form as `tokens`." }),
  node_enrollment_token: Type.String({ default: "", description: "Secret a node presents on its first registration; turns node authentication (TOTP) on." }),
  events_loopback_unauthenticated: Type.Boolean({ default: false, description: "With node authentication on, still accept unauthenticated event lines from loopback (honeypots on Core's host)." }),
  tls_cert: Type.String({ default: "", description: "PEM certificate: TLS on every listener when set (with tls_key)." }),
  tls_key: Type.String({ default: "", description: "PEM private key for tls_cert." }),
  tls_ca: Type.String({ default: "", description: "PEM CA bundle: when set, clients of 9001 and 9100 must present a certificate it signed (mutual TLS)." }),
  allowed_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
    default: [],
    description:
      "Host names REST and the WebSocket proxy answer to besides loopback names and the addresses Core listens on (e.g. Core's DNS name, for `honeybee proxy --backend` or a reverse proxy); other Host headers get 421, which stops DNS rebinding. `*` turns the check off. In the environment a JSON array: `HONEYBEE_ALLOWED_HOSTS='[\"honeybee.example.org\"]'`.",
  }),
  allowed_origins: Type.Array(Type.String({ pattern: "^https?://[^/?#@]+/?$" }), {
    default: [],
    description: "Web origins (`https://console.example.org`) whose pages may open the WebSockets and send commands, besides Core's own; other browser origins get 403.",
  }),
  api_rate_per_minute: Type.Integer({
    minimum: 0,
    default: 6000,
    description:
      "REST requests per minute per address (0: unlimited); 429 with Retry-After past it. `GET /health` is never limited, and loopback clients are not limited unless `api_rate_limit_loopback` is on.",
  }),
  api_rate_limit_loopback: Type.Boolean({
    default: false,
    description:
      "Apply `api_rate_per_minute` to loopback clients too. Off: a health checker, the CLI or a console on Core's host is never answered 429. Turn it on when a reverse proxy on Core's host forwards outside clients (they all arrive from loopback), or limit them in the proxy.",
  }),
  ws_commands_per_minute: Type.Integer({ minimum: 0, default: 120, description: "WebSocket commands per minute per address (0: unlimited)." }),
  max_connections_per_address: Type.Integer({ minimum: 0, default: 256, description: "Concurrent connections per address on 9001, 9100 and 9003 (0: unlimited)." }),
  first_message_timeout_ms: Type.Integer({
    minimum: 0,
    default: 30_000,
    description:
      "A connection on 9001 that has not registered, or on 9100 that has sent no line, within this long is closed (0: never). Loopback senders on 9100 that need no authentication are exempt: a honeypot's output plugin may connect long before its first event.",
  }),
  idle_timeout_ms: Type.Integer({
    minimum: 0,
    default: 600_000,
    description:
      "A registered node (which sends a heartbeat every 30 s), or an event stream that opened with EventStreamHello, silent this long is closed (0: never). Event streams without a hello are not closed once they have sent a line.",
  }),
  auth_failures_per_minute: Type.Integer({ minimum: 1, default: 10, description: "Failed authentications per minute per address before it is refused for a while." }),
  // ---- Outputs and alert rules (docs/outputs.md) ----
  // Each definition is checked against its own type's schema when Core starts (src/modules/outputs/model.ts), which names the field at fault.
  outputs: Type.Array(Type.Unsafe<{ name: string; type: string; [field: string]: unknown }>(Type.Object({ name: Type.String(), type: Type.String() })), {
    default: [],
    description:
      "Outputs that ship events and alerts (webhook, syslog, mqtt, nats, file), each `{name, type, ...}` as in docs/outputs.md; more can be added over REST (`POST /api/v1/outputs`). Checked at start: a bad one stops Core with its problem.",
  }),
  rules: Type.Array(Type.Unsafe<{ name: string; [field: string]: unknown }>(Type.Object({ name: Type.String() })), {
    default: [],
    description: "Alert rules, each `{name, match, threshold, new_value, cooldown_ms, outputs, ...}` as in docs/outputs.md; more can be added over REST (`POST /api/v1/rules`).",
  }),
});
export type CoreConfig = Static<typeof CoreConfig>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

const KEYS = Object.keys(CoreConfig.properties) as (keyof CoreConfig)[];

/** Commander's camelCase option names to config keys (`apiPort` -> `api_port`), unset ones dropped. */
export function flagsToConfig(opts: Record<string, unknown>): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(opts)) if (v !== undefined) flags[k.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase())] = v;
  return flags;
}

/** Reads HONEYBEE_<KEY> variables for the keys of a schema. */
export function fromEnv(keys: readonly string[], env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of keys) {
    const v = env[`HONEYBEE_${key.toUpperCase()}`];
    if (v !== undefined && v !== "") out[key] = v;
  }
  return out;
}

export function readConfigFile(path: string): Record<string, unknown> {
  if (!existsSync(path)) throw new ConfigError(`config file ${path} does not exist`);
  try {
    const parsed = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not a JSON object");
    return parsed;
  } catch (e) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(e as Error).message}`);
  }
}

/**
 * Merges the layers and validates them. Strings from env and flags are converted to the
 * key's type; a key that does not exist is an error too (a typo must not pass silently).
 */
export function resolveConfig<S extends TObject>(
  schema: S,
  layers: Record<string, unknown>[],
): Static<S> {
  const merged: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (!(key in schema.properties)) throw new ConfigError(`unknown configuration key "${key}"`);
      merged[key] = value;
    }
  }
  // Arrays arrive as JSON text from the environment (HONEYBEE_TOKENS='[...]').
  for (const [key, value] of Object.entries(merged)) {
    if ((schema.properties as Record<string, TSchema>)[key]?.type === "array" && typeof value === "string") {
      try {
        merged[key] = JSON.parse(value);
      } catch {
        throw new ConfigError(`invalid value for "${key}": expected a JSON array`);
      }
    }
  }
  const withDefaults = Value.Default(schema, Value.Convert(schema, merged)) as Record<string, unknown>;
  for (const key of Object.keys(schema.properties)) {
    const prop = (schema.properties as Record<string, import("@sinclair/typebox").TSchema>)[key]!;
    if (!Value.Check(prop, withDefaults[key])) {
      throw new ConfigError(`invalid value for "${key}": ${JSON.stringify(merged[key])} (${prop.description ?? "see README"}; expected ${describe(prop)})`);
    }
  }
  return withDefaults as Static<S>;
}

function describe(schema: import("@sinclair/typebox").TSchema): string {
  if (schema.type === "integer") return `an integer from ${schema.minimum ?? "-∞"} to ${schema.maximum ?? "∞"}`;
  if (schema.type === "boolean") return "true or false";
  if (schema.anyOf) return `one of ${schema.anyOf.map((s: { const: unknown }) => s.const).join(", ")}`;
  return schema.type ?? "a valid value";
}

/**
 * Loads Core's configuration: defaults, then `base` (a command's own defaults, such as `up`'s
 * database in its data directory), then `file`, then env, then `flags`.
 */
export function loadCoreConfig(flags: Record<string, unknown> = {}, env: Record<string, string | undefined> = process.env, base: Record<string, unknown> = {}): CoreConfig {
  const file = (flags.config as string | undefined) ?? env.HONEYBEE_CONFIG;
  const { config: _ignored, ...rest } = flags;
  return resolveConfig(CoreConfig, [base, file ? readConfigFile(file) : {}, fromEnv(KEYS, env), rest]);
}

export const defaultCoreConfig = (overrides: Partial<CoreConfig> = {}): CoreConfig => resolveConfig(CoreConfig, [overrides]);
