/**
 * The command router: one path for commands from every door (REST, WebSocket). It validates,
 * asks the registry which connection holds the node, records the command, sends it with a
 * command_id, and closes the record when the node's CommandResult comes back.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type ValueError } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import type { CommandRecord } from "../../db/command-store";
import type { CommandStorage } from "../../db/stores";
import type { Logger } from "../../log";
import { RateLimitedLog } from "../../net/rate-limited-log";
import { toU64 } from "../../protocol/json";
import type { RemovedPotData } from "../../protocol/command-data";
import { COMMAND_NAMES, Command, commandName, commandPotId, normaliseCommand, variant, type CommandResult, type InstallPot } from "../../protocol/messages";
import { EXTERNAL, NO_NODE } from "../../protocol/types";
import type { MessageBus } from "../../core/bus";
import type { Registry } from "../../core/registry";
import { catalogueInstallCheck, type InstallCheck } from "./install-check";

const COMMAND_CHECKS = new Map(
  (Command.anyOf as { properties: Record<string, unknown> }[]).map((s) => [Object.keys(s.properties)[0]!, TypeCompiler.Compile(s as any)]),
);

/** Who sent a command and through which door; the principal comes from authentication. */
export interface CommandOrigin {
  source: "rest" | "ws";
  remote: string | null;
  principal: string | null;
}

export type IssueResult =
  | { ok: true; command_id: string; node_id: bigint; message: string }
  | { ok: false; status: 400 | 404 | 409; code: string; message: string; node_id: bigint | null };

/** Validates a command object; returns the typed command or a message that says what is wrong. */
export function validateCommand(raw: unknown): { ok: true; command: Command } | { ok: false; code: string; message: string } {
  const normalised = normaliseCommand(raw);
  const v = variant(normalised);
  if (!v || typeof normalised === "string") {
    return { ok: false, code: "bad_command", message: `a command is an object with a single key naming it, one of ${COMMAND_NAMES.join(", ")}` };
  }
  const check = COMMAND_CHECKS.get(v.kind);
  if (!check) return { ok: false, code: "unknown_command", message: `unknown command ${JSON.stringify(v.kind)}; known commands: ${COMMAND_NAMES.join(", ")}` };
  if (!check.Check(normalised)) return { ok: false, code: "invalid_argument", message: `invalid argument for ${v.kind}: ${explain(check.Errors(normalised).First())}` };
  return { ok: true, command: normalised as Command };
}

/**
 * A validation error in words. TypeBox reports a failed union as a whole ("Expected union
 * value"); an operator needs the choices, or, for an argument that may be null or an object
 * (UpdateConfig), the object's own error.
 */
function explain(e: ValueError | undefined): string {
  return e ? describe(e.path, e.schema, e.value, e.message) : "does not match";
}

function describe(path: string, schema: TSchema, value: unknown, message: string): string {
  const members = (schema.anyOf ?? []) as TSchema[];
  if (members.length && members.every((m) => m.const !== undefined)) return `${path} expected one of ${members.map((m) => m.const).join(", ")}`;
  const objects = members.filter((m) => m.type === "object");
  if (objects.length === 1 && value !== null && typeof value === "object") {
    const inner = Value.Errors(objects[0]!, value).First();
    if (inner) return describe(path + inner.path, inner.schema, inner.value, inner.message);
  }
  if (members.length) return `${path} expected ${members.map((m) => (m.type === "object" ? "an object" : m.type)).join(" or ")}`;
  return `${path || "/"} ${message}`;
}

/**
 * Several instances (src/cluster/bridge.ts): a node whose connection another instance holds
 * gets its command through that instance.
 */
export interface RemoteCommands {
  /** Whether a live instance other than this one holds the node's connection. */
  heldElsewhere(nodeId: bigint): boolean;
  /** Hands an issued record to the holder; resolves with what it answered. */
  send(record: CommandRecord): Promise<{ ok: true } | { ok: false; message: string }>;
}

/** What the holder answers a remote issue with. */
export type DeliverResult = { ok: true } | { ok: false; message: string };

export class CommandRouter {
  private remote: RemoteCommands | null = null;

  /** A node can send any number of stray results: one log line per node and kind of problem, now and then. */
  private readonly strays: RateLimitedLog;

  constructor(
    private readonly registry: Registry,
    private readonly store: CommandStorage,
    private readonly bus: MessageBus,
    private readonly logger: Logger,
    private readonly installCheck: InstallCheck = catalogueInstallCheck(),
  ) {
    this.strays = new RateLimitedLog(logger);
  }

  useRemote(remote: RemoteCommands): void {
    this.remote = remote;
  }

  issue(nodeIdRaw: unknown, rawCommand: unknown, origin: CommandOrigin): IssueResult | Promise<IssueResult> {
    const nodeId = toU64(nodeIdRaw);
    if (nodeId === null) return { ok: false, status: 400, code: "bad_request", message: "node_id must be an unsigned 64-bit integer", node_id: null };
    const valid = validateCommand(rawCommand);
    if (!valid.ok) return { ok: false, status: 400, code: valid.code, message: valid.message, node_id: nodeId };
    const potId = commandPotId(valid.command);
    // No node runs an External pot: Core answers for it, whether or not its node is connected.
    if (potId !== null && this.registry.pot(nodeId, potId)?.status === EXTERNAL) return this.external(nodeId, potId, valid.command, origin);
    if (!this.registry.hasNode(nodeId)) return { ok: false, status: 404, code: "not_found", message: `node ${nodeId} is not registered`, node_id: nodeId };
    const link = this.registry.link(nodeId);
    const remote = !link && this.remote?.heldElsewhere(nodeId) ? this.remote : null;
    if (!link && !remote) return { ok: false, status: 409, code: "node_not_connected", message: `node ${nodeId} is not connected; its status is ${this.registry.node(nodeId)?.status}`, node_id: nodeId };

    const command = valid.command;
    const name = commandName(command);
    if (name === "InstallPot") {
      const refused = this.installCheck(nodeId, this.registry.catalogueOf(nodeId), (command as { InstallPot: InstallPot }).InstallPot);
      if (refused) return { ok: false, status: 400, code: refused.code, message: refused.message, node_id: nodeId };
    }
    const command_id = crypto.randomUUID();
    const now = Date.now();
    const record = { command_id, node_id: nodeId, command: name, pot_id: commandPotId(command), body: command, status: "issued" as const, message: null, source: origin.source, principal: origin.principal, remote_addr: origin.remote };
    this.store.insert(record, now);
    if (remote) return this.issueRemote(remote, { ...record, data: null, created_at: new Date(now).toISOString(), updated_at: new Date(now).toISOString() }, origin);
    if (!link!.send("NodeCommand", { node_id: nodeId, command, command_id })) {
      this.store.update(command_id, "failed", "the node's connection is not reading; command not sent", Date.now());
      return { ok: false, status: 409, code: "node_not_connected", message: `node ${nodeId} is not reading its connection`, node_id: nodeId };
    }
    this.store.update(command_id, "sent", null, Date.now());
    this.logger.info({ command_id, node_id: nodeId.toString(), command: name, source: origin.source, remote: origin.remote, principal: origin.principal }, "command sent");
    return { ok: true, command_id, node_id: nodeId, message: `${name} sent to node ${nodeId}` };
  }

  /**
   * A command for an External pot: RemovePot takes it out of the registry (Core's own answer,
   * recorded and on the feed as a node's would be); anything else is refused, since no node
   * installed it.
   */
  private external(nodeId: bigint, potId: string, command: Command, origin: CommandOrigin): IssueResult {
    const name = commandName(command);
    const where = nodeId === NO_NODE ? `pot ${potId} (no node: its events come straight to Core)` : `pot ${potId} on node ${nodeId}`;
    if (name !== "RemovePot") {
      const what = name === "InstallPot" ? "a pot id an External pot uses cannot be installed over" : "Core cannot start, stop or query it";
      return {
        ok: false,
        status: 409,
        code: "pot_external",
        message: `${where} is External: it sends events, but no node installed it, so ${what}; stop it where it runs, or remove it from the registry with "honeybee remove ${nodeId} ${potId}" (RemovePot)`,
        node_id: nodeId,
      };
    }
    const command_id = crypto.randomUUID();
    const now = Date.now();
    this.store.insert({ command_id, node_id: nodeId, command: name, pot_id: potId, body: command, status: "issued", message: null, source: origin.source, principal: origin.principal, remote_addr: origin.remote }, now);
    const message = `removed External ${where} from Core's registry (Core never ran it); it comes back if its events go on`;
    const data: RemovedPotData = { pot_id: potId, removed: false };
    this.store.update(command_id, "succeeded", message, Date.now(), data);
    this.registry.removePot(nodeId, potId);
    this.logger.info({ command_id, node_id: nodeId.toString(), pot_id: potId, source: origin.source, remote: origin.remote, principal: origin.principal }, "External honeypot removed from the registry");
    this.bus.publish("CommandResult", { command_id, node_id: nodeId, ok: true, message, data }, { node_id: nodeId });
    return { ok: true, command_id, node_id: nodeId, message };
  }

  /** The holder answered (it sent the command and closes the record) or did not: the record says which. */
  private async issueRemote(remote: RemoteCommands, record: CommandRecord, origin: CommandOrigin): Promise<IssueResult> {
    const { command_id, node_id: nodeId, command: name } = record;
    // The record must be in the database before the holder may close it. While the database is
    // away the command is not sent (REST answers 503); its record is closed once it is back.
    try {
      await this.store.settled?.();
    } catch (e) {
      this.store.update(command_id, "failed", `not sent: the database could not be reached (${(e as Error).message})`, Date.now());
      throw e;
    }
    const answer = await remote.send(record).catch((e: Error) => ({ ok: false as const, message: e.message }));
    if (!answer.ok) {
      this.store.update(command_id, "failed", answer.message, Date.now());
      return { ok: false, status: 409, code: "node_not_connected", message: `node ${nodeId}: ${answer.message}`, node_id: nodeId };
    }
    this.store.forget?.(command_id);
    this.logger.info({ command_id, node_id: nodeId.toString(), command: name, source: origin.source, remote: origin.remote, principal: origin.principal }, "command sent through the instance that holds the node");
    return { ok: true, command_id, node_id: nodeId, message: `${name} sent to node ${nodeId}` };
  }

  /** Another instance's command for a node whose connection this one holds. */
  deliver(record: CommandRecord): DeliverResult {
    const link = this.registry.link(record.node_id);
    if (!link) return { ok: false, message: "the node is no longer connected to the instance that held it" };
    this.store.adopt?.(record);
    if (!link.send("NodeCommand", { node_id: record.node_id, command: record.body, command_id: record.command_id })) {
      this.store.update(record.command_id, "failed", "the node's connection is not reading; command not sent", Date.now());
      return { ok: false, message: "the node is not reading its connection" };
    }
    this.store.update(record.command_id, "sent", null, Date.now());
    return { ok: true };
  }

  /**
   * A node's CommandResult closes its record and goes to the live feed. A successful RemovePot
   * also removes the pot from the registry: the node has deleted it (or never had it, as after a
   * failed install), and the CommandResult on the feed is the removal's announcement.
   */
  onResult(result: CommandResult): void {
    const message = result.message ?? null;
    const record = this.store.get(result.command_id);
    if (record && record.node_id !== result.node_id) {
      this.strays.warn(`other:${result.node_id}`, { command_id: result.command_id, node_id: result.node_id.toString(), sent_to: record.node_id.toString() }, "CommandResult from a node the command was not sent to; ignored");
      return;
    }
    // A failed install that the node reported Failed stays in the registry until it is removed: the record says how.
    const debris = !result.ok && record?.command === "InstallPot" && record.pot_id !== null && this.registry.pot(result.node_id, record.pot_id)?.status === "Failed";
    const stored = debris ? `${message ?? "failed"}; ${record.pot_id} stays in Core's registry as Failed: remove it with "honeybee remove ${result.node_id} ${record.pot_id}" (RemovePot)` : message;
    const closed = this.store.update(result.command_id, result.ok ? "succeeded" : "failed", stored, Date.now(), result.data);
    if (!closed) this.strays.warn(`stale:${result.node_id}`, { command_id: result.command_id, node_id: result.node_id.toString() }, "CommandResult for an unknown or already finished command");
    if (closed && result.ok && record?.command === "RemovePot" && record.pot_id) {
      this.registry.removePot(result.node_id, record.pot_id);
      this.logger.info({ node_id: result.node_id.toString(), pot_id: record.pot_id, command_id: result.command_id }, "honeypot removed");
    }
    const payload = { command_id: result.command_id, node_id: result.node_id, ok: result.ok, ...(message !== null ? { message } : {}), ...(result.data !== undefined ? { data: result.data } : {}) };
    this.bus.publish("CommandResult", payload, { node_id: result.node_id });
  }
}
