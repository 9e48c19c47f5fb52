/**
 * Commands that act on a honeypot through its node: install, start, stop, restart, status.
 * Each is sent through REST and then watched on the live feed until the pot reaches its state,
 * fails (with the node's message) or the time-out passes. The feed is opened before the
 * command is sent, so no status update can slip between the two.
 */
import { InvalidArgumentError, type Command } from "commander";
import { POT_ID_PATTERN } from "../protocol/types";
import { ApiError, type Node } from "./client";
import { action, wholeNumber, withConnection, type Ctx } from "./command";
import { CliError, usageError } from "./errors";
import { LiveFeed } from "./feed";
import { nodeLabel } from "./format";
import { explainNotFound } from "./nodes";
import { clean, renderTable } from "./table";
import { CommandWatch, type Verdict } from "./wait";

const POT_ID = new RegExp(POT_ID_PATTERN);
const CONFIG_KEY = /^[a-z][a-z0-9_]*$/;
const WATCHED_KINDS = ["PotStatusUpdate", "CommandResult", "NodeStatusUpdate", "NodeDrop"];

interface WaitOpts {
  wait: boolean;
  timeout: number;
}

/** Collects repeated `--config key=value` flags into one object. */
function configPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = value.indexOf("=");
  const key = eq < 0 ? "" : value.slice(0, eq);
  if (!CONFIG_KEY.test(key)) throw new InvalidArgumentError("expected KEY=VALUE with a lower-case key such as ssh_port=2222");
  return { ...previous, [key]: value.slice(eq + 1) };
}

export function checkPotId(potId: string): string {
  if (!POT_ID.test(potId)) throw usageError(`pot id ${JSON.stringify(potId)} is not valid: use 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit`);
  return potId;
}

function waitOptions(cmd: Command, seconds: number): Command {
  return cmd
    .option("--no-wait", "return once Core has sent the command, without waiting for the node")
    .option("--timeout <seconds>", "how long to wait for the node", wholeNumber(1, 86_400), seconds);
}

/** Sends a command through REST; Core's refusals become errors that say what to do. */
export async function sendCommand(ctx: Ctx, node: Pick<Node, "node_id">, command: Record<string, unknown>): Promise<string> {
  try {
    return (await ctx.api.sendCommand(node.node_id, command)).command_id;
  } catch (e) {
    if (e instanceof ApiError && e.code === "node_not_connected") throw new CliError(`${e.message}; is its node agent running? check with "honeybee nodes"`);
    if (e instanceof ApiError && e.status === 400) throw usageError(e.message);
    explainNotFound(e);
  }
}

/** Sends a command and, unless --no-wait, returns how the node handled it (the caller reports it). */
async function issue(ctx: Ctx, node: Node, potId: string, command: Record<string, unknown>, target: string | null, opts: WaitOpts & { via?: string; quiet?: boolean }): Promise<Verdict & { done: true }> {
  const name = Object.keys(command)[0]!;
  const feed = opts.wait ? await LiveFeed.connect(ctx.ws, { kinds: WATCHED_KINDS, node_id: node.node_id }, ctx.token) : null;
  try {
    const commandId = await sendCommand(ctx, node, command);
    if (!opts.quiet) ctx.progress(`${name} ${potId}: sent to node ${nodeLabel(node)}, command ${commandId}`);
    if (!feed) {
      if (ctx.json) ctx.printJson({ command_id: commandId, node_id: node.node_id, pot_id: potId, command: name });
      else ctx.out(commandId);
      return { done: true, ok: true, status: null, potType: null, message: null };
    }
    const watch = new CommandWatch({ commandId, nodeId: node.node_id, potId, target, via: opts.via });
    const deadline = Date.now() + opts.timeout * 1000;
    for (;;) {
      const next = await feed.next(deadline - Date.now());
      if ("timeout" in next) {
        throw new CliError(
          `timed out after ${opts.timeout} s waiting for ${potId} on node ${nodeLabel(node)} to ${target ? `be ${target}` : "report its status"} (last status: ${watch.status ?? "none yet"}); the node may still finish: check with "honeybee status ${node.node_id} ${potId}"`,
        );
      }
      if ("closed" in next) throw new CliError(`the live feed closed (code ${next.closed.code}) while waiting for ${potId}; check with "honeybee status ${node.node_id} ${potId}"`);
      let verdict = watch.onMessage(next);
      if (!verdict.done && verdict.askRegistry) {
        const detail = await ctx.api.node(node.node_id);
        const pot = detail.honeypots.find((p) => p.pot_id === potId);
        verdict = watch.onRegistry(pot?.status ?? null, pot?.pot_type ?? null);
      }
      if (verdict.done) return verdict;
      if (verdict.progress) ctx.progress(`  ${clean(verdict.progress)}`);
    }
  } finally {
    feed?.close();
  }
}

/**
 * Prints a finished wait: the pot's state, or the node's reason for Failed (exit 1). `leftOver`:
 * a Failed pot stays in the registry (a failed install), so the error says how to remove it.
 */
function report(ctx: Ctx, node: Node, potId: string, v: Verdict & { done: true }, leftOver = false): void {
  const body = { node_id: node.node_id, node_name: node.node_name, pot_id: potId, pot_type: v.potType, status: v.ok ? v.status : "Failed", ok: v.ok, message: v.message };
  if (ctx.json) ctx.printJson(body);
  const remove = leftOver && v.status === "Failed" ? `; ${potId} stays listed as Failed: remove it with "honeybee remove ${node.node_id} ${potId}"` : "";
  if (!v.ok) throw new CliError(`${potId} failed on node ${nodeLabel(node)}: ${v.message}${remove}`);
  if (!ctx.json) ctx.out(`${potId} is ${v.status} on node ${nodeLabel(node)}${v.message ? `: ${clean(v.message)}` : ""}`);
}

export function registerPotCommands(program: Command): void {
  withConnection(
    waitOptions(
      program
        .command("install")
        .description("install a honeypot on a node and wait until it is installed (and running with --start)")
        .argument("<node>", "node id, or node name")
        .argument("<type>", 'honeypot kind, e.g. cowrie (SSH/Telnet) or honnypotter (HTTP login); see "honeybee catalogue"')
        .requiredOption("--pot-id <id>", "identifier of the new honeypot, unique on its node, e.g. ssh-01")
        .option("-c, --config <key=value>", "a configuration key, e.g. ssh_port=2222 (repeat for more)", configPair)
        .option("--start", "start the honeypot once it is installed")
        .option("--git-url <url>", "install from this catalogue repository instead of the node's")
        .option("--git-branch <branch>", "branch of --git-url"),
      300,
    ),
  ).action(
    action<WaitOpts & { potId: string; config?: Record<string, string>; start?: boolean; gitUrl?: string; gitBranch?: string }>(async (ctx, [ref, type], opts) => {
      const potId = checkPotId(opts.potId);
      const node = await ctx.api.resolveNode(ref!);
      const install = {
        pot_id: potId,
        honeypot_type: type!,
        config: opts.config ?? {},
        auto_start: opts.start === true,
        ...(opts.gitUrl ? { git_url: opts.gitUrl } : {}),
        ...(opts.gitBranch ? { git_branch: opts.gitBranch } : {}),
      };
      const verdict = await issue(ctx, node, potId, { InstallPot: install }, opts.start ? "Running" : "Stopped", { ...opts, via: "Installing" });
      if (opts.wait) report(ctx, node, potId, verdict, true);
    }),
  );

  const lifecycle: [string, string, string, string][] = [
    ["start", "DeployPot", "Running", "start a honeypot and wait until it runs"],
    ["stop", "StopPot", "Stopped", "stop a honeypot and wait until it has stopped"],
    ["restart", "RestartPot", "Running", "restart a honeypot and wait until it runs again"],
  ];
  for (const [verb, commandName, target, description] of lifecycle) {
    withConnection(
      waitOptions(program.command(verb).description(description).argument("<node>", "node id, or node name").argument("<pot>", "honeypot id"), 60),
    ).action(
      action<WaitOpts>(async (ctx, [ref, pot], opts) => {
        const potId = checkPotId(pot!);
        const node = await ctx.api.resolveNode(ref!);
        const verdict = await issue(ctx, node, potId, { [commandName]: potId }, target, opts);
        if (opts.wait) report(ctx, node, potId, verdict);
      }),
    );
  }

  withConnection(
    program
      .command("status")
      .description("ask a node for the current status of one of its honeypots")
      .argument("<node>", "node id, or node name")
      .argument("<pot>", "honeypot id")
      .option("--timeout <seconds>", "how long to wait for the node's answer", wholeNumber(1, 86_400), 30),
  ).action(
    action<{ timeout: number }>(async (ctx, [ref, pot], opts) => {
      const potId = checkPotId(pot!);
      const node = await ctx.api.resolveNode(ref!);
      const v = await issue(ctx, node, potId, { GetPotStatus: potId }, null, { wait: true, timeout: opts.timeout, quiet: true });
      if (!v.ok || ctx.json) return report(ctx, node, potId, v);
      const row = { pot: potId, type: v.potType ?? "?", status: v.status ?? "?", node: node.node_name, message: v.message ?? "" };
      ctx.out(
        renderTable(
          [
            { header: "POT", value: (r: typeof row) => r.pot },
            { header: "TYPE", value: (r) => r.type },
            { header: "STATUS", value: (r) => r.status },
            { header: "NODE", value: (r) => r.node },
            { header: "MESSAGE", value: (r) => r.message, shrink: true },
          ],
          [row],
          ctx.width,
        ),
      );
    }),
  );
}
