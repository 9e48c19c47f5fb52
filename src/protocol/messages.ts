/**
 * Protocol v2 messages: one TypeBox schema per payload, the envelope, and a decoder that
 * accepts every form existing implementations send.
 *
 * Envelope: `{"version": 2, "message": {"<Kind>": <payload>}}`. A unit variant may arrive as
 * `"Kind"`, `{"Kind": null}` or `{"Kind": {}}`. Unknown fields are ignored.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { LOG_LEVELS } from "../log";
import type { ValueError } from "@sinclair/typebox/value";
import { NodeId, NodeStatusValue, NodeTypeValue, PotId, PotStatusValue, StringMap } from "./types";

export const PROTOCOL_VERSION = 2;

// ---- Node -> Core ---------------------------------------------------------------------

export const NodeRegistration = Type.Object({
  node_id: NodeId,
  node_name: Type.String({ minLength: 1, maxLength: 256 }),
  address: Type.Optional(Type.String({ maxLength: 256, description: "Where the node can be reached (host name or IP address), as it says." })),
  port: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  node_type: NodeTypeValue,
  catalogue: Type.Optional(
    Type.String({ maxLength: 128, description: "Fingerprint of the node's default catalogue (`sha256:` and hex); Core checks InstallPot against its own catalogue when it has the same." }),
  ),
  totp_code: Type.Optional(Type.Union([Type.String({ maxLength: 16 }), Type.Null()])),
  enrollment_token: Type.Optional(Type.String({ maxLength: 1024 })),
});
export type NodeRegistration = Static<typeof NodeRegistration>;

/** A node's own figures, sent with its heartbeats (NodeStatusUpdate `health`); each is optional. */
export const NodeHealth = Type.Object(
  {
    agent_version: Type.Optional(Type.String({ maxLength: 64, description: "Version of the node agent." })),
    uptime_s: Type.Optional(Type.Number({ minimum: 0, description: "Seconds since the node agent started." })),
    host_uptime_s: Type.Optional(Type.Number({ minimum: 0, description: "Seconds since the node's host booted." })),
    cpus: Type.Optional(Type.Integer({ minimum: 0, description: "Logical CPUs of the host." })),
    cpu_percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100, description: "CPU use of the whole host since the previous heartbeat, in percent of all its CPUs." })),
    load_1m: Type.Optional(Type.Number({ minimum: 0, description: "The host's load average over one minute." })),
    mem_total_bytes: Type.Optional(Type.Integer({ minimum: 0, description: "The host's memory." })),
    mem_available_bytes: Type.Optional(Type.Integer({ minimum: 0, description: "Memory available to new programs (Linux MemAvailable)." })),
    agent_rss_bytes: Type.Optional(Type.Integer({ minimum: 0, description: "Resident memory of the node agent itself." })),
    disk_total_bytes: Type.Optional(Type.Integer({ minimum: 0, description: "Size of the file system holding the node's data directory." })),
    disk_free_bytes: Type.Optional(Type.Integer({ minimum: 0, description: "Space left on it for the node (what an unprivileged user may use)." })),
  },
  { example: { agent_version: "0.9.0", uptime_s: 86400, cpus: 2, cpu_percent: 3.5, mem_total_bytes: 2_082_000_896, mem_available_bytes: 1_300_000_000, disk_total_bytes: 20_000_000_000, disk_free_bytes: 12_000_000_000 } },
);
export type NodeHealth = Static<typeof NodeHealth>;

/** The heartbeat; `health` is this project's extension (older nodes and the upstream node leave it out). */
export const NodeStatusUpdate = Type.Object({ node_id: NodeId, status: NodeStatusValue, health: Type.Optional(NodeHealth) });
export type NodeStatusUpdate = Static<typeof NodeStatusUpdate>;

export const PotStatusUpdate = Type.Object({
  node_id: NodeId,
  pot_id: PotId,
  pot_type: Type.String({ minLength: 1, maxLength: 64 }),
  status: PotStatusValue,
  message: Type.Optional(Type.Union([Type.String({ maxLength: 16_384 }), Type.Null()])),
});
export type PotStatusUpdate = Static<typeof PotStatusUpdate>;

/** NodeEvent's payload is itself an enum: Started, Stopped, Alarm{description}, Error{message}. */
export const NodeEventPayload = Type.Union([
  Type.Literal("Started"),
  Type.Literal("Stopped"),
  Type.Object({ Started: Type.Optional(Type.Any()) }, { minProperties: 1, maxProperties: 1 }),
  Type.Object({ Stopped: Type.Optional(Type.Any()) }, { minProperties: 1, maxProperties: 1 }),
  Type.Object({ Alarm: Type.Object({ description: Type.String() }) }),
  Type.Object({ Error: Type.Object({ message: Type.String() }) }),
]);
export type NodeEventPayload = Static<typeof NodeEventPayload>;

export const CommandResult = Type.Object({
  command_id: Type.String({ minLength: 1, maxLength: 128 }),
  node_id: NodeId,
  ok: Type.Boolean(),
  message: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  /** The answer of a query command (GetPotLogs, GetPotMetrics, ...); its shapes are in command-data.ts. */
  data: Type.Optional(Type.Unknown({ description: "The command's answer as structured data; docs/protocol.md gives each command's shape." })),
});
export type CommandResult = Static<typeof CommandResult>;

// ---- File transfer (node -> Core, resumable; docs/protocol.md#file-transfer) -----------

const Sha256 = Type.String({ pattern: "^[0-9a-f]{64}$", description: "SHA-256 of the whole file, lowercase hex." });

/** A file the node holds, with what is known about where it came from; Core answers FileStatus. */
export const FileOffer = Type.Object({
  sha256: Sha256,
  size: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  kind: Type.String({ minLength: 1, maxLength: 32, pattern: "^[a-z][a-z0-9_]*$", description: "What the file is, which decides where Core keeps it: artifact (a download or an upload)." }),
  /** One sighting of the file: unique per sighting, so an offer repeated after a reconnect counts once. */
  sighting_id: Type.String({ minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9._-]+$" }),
  meta: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.Union([Type.String({ maxLength: 4096 }), Type.Number(), Type.Boolean(), Type.Null()]), { maxProperties: 32 })),
});
export type FileOffer = Static<typeof FileOffer>;

/** Bytes of an offered file from `offset` (base64); sent only at the offset Core last named. */
export const FileChunk = Type.Object({
  sha256: Sha256,
  offset: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }),
  data: Type.String({ maxLength: 1024 * 1024, contentEncoding: "base64" }),
});
export type FileChunk = Static<typeof FileChunk>;

/** Core's answer to FileOffer and to each FileChunk: where to go on, or that it is done. */
export const FileStatus = Type.Object({
  sha256: Sha256,
  offset: Type.Integer({ minimum: 0 }),
  complete: Type.Boolean(),
  /** Set when Core will not take the file (too_large, hash_mismatch, ...): the node stops offering it. */
  error: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});
export type FileStatus = Static<typeof FileStatus>;

/** PotEvent and PotLog are loosely shaped; the ingest normaliser owns their validation. */
export const LooseObject = Type.Record(Type.String(), Type.Any());

// ---- Core -> Node ---------------------------------------------------------------------

export const RegistrationAck = Type.Object({
  node_id: NodeId,
  accepted: Type.Boolean(),
  message: Type.String(),
  totp_key: Type.Optional(Type.String()),
});
export type RegistrationAck = Static<typeof RegistrationAck>;

export const InstallPot = Type.Object({
  pot_id: PotId,
  honeypot_type: Type.String({ minLength: 1, maxLength: 64, example: "cowrie" }),
  config: Type.Optional(StringMap),
  auto_start: Type.Optional(Type.Boolean()),
  git_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
  git_branch: Type.Optional(Type.String({ minLength: 1, maxLength: 256, pattern: "^[A-Za-z0-9._/-]+$" })),
});
export type InstallPot = Static<typeof InstallPot>;

/** Settings a node changes while it runs (UpdateConfig); each is optional, none persists past a node restart. */
export const LiveSettings = Type.Object(
  {
    log_level: Type.Optional(Type.Union(LOG_LEVELS.map((l) => Type.Literal(l)), { description: "The node's log level." })),
    heartbeat_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 3_600_000, description: "Interval of the node's heartbeats; keep it below a third of Core's heartbeat_timeout_ms." })),
    spool_max_bytes: Type.Optional(Type.Integer({ minimum: 1024, description: "Disk bound of the event spool (at least spool_segment_bytes); lowering it drops the oldest events at once." })),
  },
  { additionalProperties: false, example: { log_level: "debug", heartbeat_ms: 10000 } },
);
export type LiveSettings = Static<typeof LiveSettings>;

const potCommand = (name: string, description: string) =>
  Type.Object({ [name]: PotId }, { additionalProperties: false, description, example: { [name]: "ssh-01" } });

/**
 * The command object: a single key naming the command. The first eleven are the upstream
 * command set (H0neyBe/honeybee_node); RemovePot is this project's extension (docs/protocol.md).
 */
export const Command = Type.Union(
  [
    Type.Object(
      { InstallPot },
      { additionalProperties: false, description: "Install a honeypot from the node's catalogue.", example: { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: "2222" }, auto_start: true } } },
    ),
    potCommand("DeployPot", "Start a honeypot."),
    potCommand("StopPot", "Stop a honeypot."),
    potCommand("RestartPot", "Stop and start a honeypot."),
    potCommand("RemovePot", "Stop a honeypot, delete its files on the node and its entry in Core's registry (extension; upstream nodes refuse it)."),
    potCommand("GetPotStatus", "A honeypot's status."),
    potCommand("GetPotInfo", "A honeypot's details: kind, status, desired state, pid, source, install time."),
    potCommand("GetPotLogs", "The last lines of a honeypot's stdout, stderr and install logs."),
    potCommand("GetPotMetrics", "A honeypot's CPU, memory, uptime, restarts and events relayed."),
    Type.Object({ GetInstalledPots: Type.Null() }, { additionalProperties: false, description: "Every installed honeypot with its status.", example: { GetInstalledPots: null } }),
    Type.Object(
      { UpdateConfig: Type.Union([Type.Null(), LiveSettings]) },
      { additionalProperties: false, description: "Change the node's live settings (null: only report them).", example: { UpdateConfig: { log_level: "debug", heartbeat_ms: 10000 } } },
    ),
    Type.Object({ Restart: Type.Null() }, { additionalProperties: false, description: "Restart every running honeypot of the node.", example: { Restart: null } }),
  ],
  {
    description: "A single key naming the command; its value is the command's argument.",
    example: { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: "2222" }, auto_start: true } },
  },
);
export type Command = Static<typeof Command>;
export const COMMAND_NAMES = [
  "InstallPot",
  "DeployPot",
  "StopPot",
  "RestartPot",
  "RemovePot",
  "GetPotStatus",
  "GetPotInfo",
  "GetPotLogs",
  "GetPotMetrics",
  "GetInstalledPots",
  "UpdateConfig",
  "Restart",
] as const;
export type CommandName = (typeof COMMAND_NAMES)[number];
/** Commands whose argument may be left out (`"Restart"`, `{"Restart": {}}`); an empty UpdateConfig only reports. */
const UNIT_COMMANDS = new Set<string>(["GetInstalledPots", "Restart", "UpdateConfig"]);

export const NodeCommand = Type.Object({
  node_id: NodeId,
  command: Command,
  command_id: Type.Optional(Type.String()),
});
export type NodeCommand = Static<typeof NodeCommand>;

export const ProtocolErrorPayload = Type.Object({ code: Type.String(), message: Type.String() });
export type ProtocolErrorPayload = Static<typeof ProtocolErrorPayload>;

// ---- Session recordings (docs/protocol.md#sessionrecording) ---------------------------

/** Largest terminal recording Core takes; the built-in cowrie stops recording well before. */
export const MAX_RECORDING_BYTES = 4 * 1024 * 1024;
/** Bytes of a recording per SessionRecording message at most (before base64). */
export const RECORDING_CHUNK_BYTES = 192 * 1024;

export const SessionRecording = Type.Object({
  node_id: NodeId,
  pot_id: PotId,
  session: Type.String({ pattern: "^[A-Za-z0-9_.:-]{1,64}$", description: "The session id of the honeypot's events (Cowrie's `session`)." }),
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$", description: "SHA-256 of the whole recording, hex." }),
  size: Type.Integer({ minimum: 1, maximum: MAX_RECORDING_BYTES, description: "Bytes of the whole recording." }),
  offset: Type.Integer({ minimum: 0, maximum: MAX_RECORDING_BYTES, description: "Where this chunk starts; chunks come in order, the first at 0." }),
  data: Type.String({ maxLength: Math.ceil(RECORDING_CHUNK_BYTES / 3) * 4, description: "The chunk, base64." }),
});
export type SessionRecording = Static<typeof SessionRecording>;

export const SessionRecordingAck = Type.Object({
  pot_id: PotId,
  session: Type.String(),
  ok: Type.Boolean({ description: "True: stored. False: refused (`message` says why): for good, sending it again does not help, unless `retry_after_ms` is given." }),
  message: Type.String(),
  retry_after_ms: Type.Optional(
    Type.Integer({ minimum: 0, description: "With `ok: false`: Core is busy (it holds as many unfinished recordings as it takes); send the recording again, from offset 0, after this long." }),
  ),
});
export type SessionRecordingAck = Static<typeof SessionRecordingAck>;

// ---- Event socket and WebSocket ------------------------------------------------------

export const EventStreamHello = Type.Object({
  node_id: Type.Optional(NodeId),
  acks: Type.Optional(Type.Boolean()),
  totp_code: Type.Optional(Type.String({ maxLength: 16 })),
  spool_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: "The sender's spool (the node agent's event spool), stable across reconnects." })),
  first_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "The spool position just before this connection's first line." })),
});
export type EventStreamHello = Static<typeof EventStreamHello>;

export const EventAck = Type.Object({ seq: Type.Integer({ minimum: 0 }) });

export const CommandAck = Type.Object({
  command_id: Type.Union([Type.String(), Type.Null()]),
  node_id: Type.Union([NodeId, Type.Null()]),
  accepted: Type.Boolean(),
  message: Type.String(),
});
export type CommandAck = Static<typeof CommandAck>;

// ---- Envelope decoding -----------------------------------------------------------------

/** Payload schema per kind; `null` marks a unit variant. */
const PAYLOADS = {
  NodeRegistration,
  NodeStatusUpdate,
  PotStatusUpdate,
  PotEvent: LooseObject,
  PotLog: LooseObject,
  NodeEvent: NodeEventPayload,
  CommandResult,
  SessionRecording,
  SessionRecordingAck,
  FileOffer,
  FileChunk,
  FileStatus,
  NodeDrop: null,
  RegistrationAck,
  NodeCommand,
  EventStreamHello,
  EventAck,
  CommandAck,
  Error: ProtocolErrorPayload,
} as const;
export type MessageKind = keyof typeof PAYLOADS;

/** True for the name of a Protocol v2 message kind (own keys only: not `toString` and the like). */
export function isMessageKind(name: string): name is MessageKind {
  return Object.hasOwn(PAYLOADS, name);
}
export type Payload<K extends MessageKind> = (typeof PAYLOADS)[K] extends TSchema ? Static<(typeof PAYLOADS)[K]> : null;

const CHECKS = Object.fromEntries(
  Object.entries(PAYLOADS).map(([k, s]) => [k, s ? TypeCompiler.Compile(s as TSchema) : null]),
) as Record<MessageKind, ReturnType<typeof TypeCompiler.Compile> | null>;

export type Decoded = { [K in MessageKind]: { ok: true; kind: K; payload: Payload<K> } }[MessageKind];
export type DecodeError = { ok: false; code: "bad_envelope" | "unsupported_version" | "unknown_kind" | "invalid_payload"; message: string; kind?: string };

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Splits `"Kind"` / `{"Kind": payload}` into its kind and payload (null for unit forms). */
export function variant(value: unknown): { kind: string; payload: unknown } | null {
  if (typeof value === "string") return { kind: value, payload: null };
  if (!isPlainObject(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1) return null;
  const kind = keys[0]!;
  return { kind, payload: value[kind] };
}

function isEmptyUnit(payload: unknown): boolean {
  return payload === null || payload === undefined || (isPlainObject(payload) && Object.keys(payload).length === 0);
}

export function decodeEnvelope(value: unknown, accept?: ReadonlySet<string>): Decoded | DecodeError {
  if (!isPlainObject(value)) return { ok: false, code: "bad_envelope", message: "a message must be a JSON object" };
  if (value.version !== PROTOCOL_VERSION) {
    return {
      ok: false,
      code: "unsupported_version",
      message: `unsupported protocol version ${JSON.stringify(value.version ?? null)}; this Core speaks version ${PROTOCOL_VERSION}`,
    };
  }
  const v = variant(value.message);
  if (!v) return { ok: false, code: "bad_envelope", message: "`message` must be a string or an object with a single key naming the message kind" };
  return decodeVariant(v.kind, v.payload, accept);
}

/** Decodes a kind and its payload, as if it had arrived in an envelope. */
export function decodeVariant(kind: string, payload: unknown, accept?: ReadonlySet<string>): Decoded | DecodeError {
  if (!isMessageKind(kind) || (accept && !accept.has(kind))) {
    return { ok: false, code: "unknown_kind", kind, message: `unknown or unexpected message kind ${JSON.stringify(kind)}` };
  }
  const k = kind as MessageKind;
  const check = CHECKS[k];
  if (!check) {
    if (!isEmptyUnit(payload)) return { ok: false, code: "invalid_payload", kind, message: `${kind} takes no payload` };
    return { ok: true, kind: k, payload: null } as Decoded;
  }
  if (k === "NodeCommand" && isPlainObject(payload)) payload = { ...payload, command: normaliseCommand(payload.command) };
  if (!check.Check(payload)) {
    const first = check.Errors(payload).First();
    const where = first ? `${first.path || "/"}: ${describeError(first)}` : "does not match the schema";
    return { ok: false, code: "invalid_payload", kind, message: `invalid ${kind}: ${where}` };
  }
  return { ok: true, kind: k, payload } as Decoded;
}

/** TypeBox says "Expected union value" for an enum; a peer needs the values it may send. */
function describeError(e: ValueError): string {
  const options = (e.schema as { anyOf?: { const?: unknown }[] }).anyOf;
  if (!options?.length || !options.every((o) => typeof o.const === "string")) return e.message;
  const got = typeof e.value === "string" ? (e.value.length > 40 ? `${JSON.stringify(e.value.slice(0, 40))}... (${e.value.length} characters)` : JSON.stringify(e.value)) : typeof e.value;
  return `must be one of ${options.map((o) => o.const).join(", ")}, got ${got}`;
}

/** Turns the unit forms of argument-less commands into `{Name: null}`. */
export function normaliseCommand(command: unknown): unknown {
  const v = variant(command);
  if (v && UNIT_COMMANDS.has(v.kind) && isEmptyUnit(v.payload)) return { [v.kind]: null };
  return command;
}

export function commandName(command: Command): CommandName {
  return Object.keys(command)[0] as CommandName;
}

/** Pot id a command is about, when it is about one. */
export function commandPotId(command: Command): string | null {
  const [name, arg] = Object.entries(command)[0]!;
  if (name === "InstallPot") return (arg as InstallPot).pot_id;
  return typeof arg === "string" ? arg : null;
}

export function envelope<K extends MessageKind>(kind: K, payload: Payload<K>): { version: 2; message: Record<string, unknown> | string } {
  return { version: PROTOCOL_VERSION, message: payload === null ? kind : { [kind]: payload } };
}
