/**
 * Commands whose answer is the node's CommandResult itself: `logs`, `metrics` and `remove`.
 * The feed is opened before the command is sent (as in pots.ts), then read until the result
 * with this command_id arrives, the node goes away, or the time-out passes.
 */
import type { Command } from "commander";
import type { PotLogsData, PotMetricsData, RemovedPotData } from "../protocol/command-data";
import { toU64 } from "../protocol/json";
import { NO_NODE } from "../protocol/types";
import type { Node } from "./client";
import { action, wholeNumber, withConnection, type Ctx } from "./command";
import { CliError, usageError } from "./errors";
import { LiveFeed } from "./feed";
import { nodeLabel } from "./format";
import { checkPotId, sendCommand } from "./pots";
import { clean } from "./table";

interface Answer<T> {
  ok: boolean;
  message: string;
  data: T | undefined;
}

const NODE_GONE = new Set(["Unknown", "Stopped"]);

/** Sends one command and returns the node's CommandResult for it. */
async function ask<T>(ctx: Ctx, node: Pick<Node, "node_id" | "node_name">, command: Record<string, unknown>, timeoutS: number): Promise<Answer<T>> {
  const name = Object.keys(command)[0]!;
  const feed = await LiveFeed.connect(ctx.ws, { kinds: ["CommandResult", "NodeStatusUpdate", "NodeDrop"], node_id: node.node_id }, ctx.token);
  try {
    const commandId = await sendCommand(ctx, node, command);
    const deadline = Date.now() + timeoutS * 1000;
    for (;;) {
      const next = await feed.next(deadline - Date.now());
      if ("timeout" in next) {
        throw new CliError(
          `node ${nodeLabel(node)} did not answer ${name} within ${timeoutS} s (command ${commandId}); a node without CommandResult support (the upstream Go node) answers ${name} with an error event instead: see "honeybee events --type node.error"`,
        );
      }
      if ("closed" in next) throw new CliError(`the live feed closed (code ${next.closed.code}) while waiting for the answer to ${name}; see GET /api/v1/commands/${commandId}`);
      const p = next.payload ?? {};
      if (next.kind === "CommandResult" && p.command_id === commandId) return { ok: p.ok === true, message: String(p.message ?? ""), data: p.data as T | undefined };
      if (p.node_id === node.node_id && (next.kind === "NodeDrop" || (next.kind === "NodeStatusUpdate" && NODE_GONE.has(String(p.status))))) {
        throw new CliError(`node ${nodeLabel(node)} disconnected before it answered ${name}`);
      }
    }
  } finally {
    feed.close();
  }
}

/** A refusal from the node: its reason, exit 1. */
function refused(node: Node, potId: string, a: Answer<unknown>): never {
  throw new CliError(`node ${nodeLabel(node)} could not answer for ${potId}: ${clean(a.message)}`);
}

const STREAMS = ["stdout", "stderr", "install"] as const;

function formatBytes(n: number | null): string {
  if (n === null) return "-";
  return n >= 1 << 30 ? `${(n / (1 << 30)).toFixed(1)} GiB` : n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${(n / 1024).toFixed(0)} KiB`;
}

function formatUptime(s: number | null): string {
  if (s === null) return "-";
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  return d ? `${d}d ${h}h ${m}m` : h ? `${h}h ${m}m` : m ? `${m}m ${Math.floor(s % 60)}s` : `${s.toFixed(1)}s`;
}

export function registerPotAnswerCommands(program: Command): void {
  const timeout = (cmd: Command) => cmd.option("--timeout <seconds>", "how long to wait for the node's answer", wholeNumber(1, 86_400), 30);

  withConnection(
    timeout(
      program
        .command("logs")
        .description("show the last lines of a honeypot's stdout, stderr and install log, as its node has them")
        .argument("<node>", "node id, or node name")
        .argument("<pot>", "honeypot id")
        .option("--stream <name>", "only this log: stdout, stderr or install")
        .option("-n, --lines <count>", "lines per log, at most (the node sends up to 100)", wholeNumber(1, 100), 100),
    ),
  ).action(
    action<{ timeout: number; stream?: string; lines: number }>(async (ctx, [ref, pot], opts) => {
      const potId = checkPotId(pot!);
      if (opts.stream !== undefined && !(STREAMS as readonly string[]).includes(opts.stream)) throw usageError(`--stream is stdout, stderr or install, not ${JSON.stringify(opts.stream)}`);
      const node = await ctx.api.resolveNode(ref!);
      const a = await ask<PotLogsData>(ctx, node, { GetPotLogs: potId }, opts.timeout);
      if (!a.ok || !a.data) refused(node, potId, a);
      const streams = opts.stream ? [opts.stream as (typeof STREAMS)[number]] : STREAMS;
      const picked = Object.fromEntries(streams.map((s) => [s, a.data![s].slice(-opts.lines)]));
      if (ctx.json) return ctx.printJson({ node_id: node.node_id, node_name: node.node_name, pot_id: potId, ...picked });
      const shown = streams.filter((s) => opts.stream || picked[s]!.length > 0);
      if (shown.length === 0) ctx.progress(`${potId} on node ${nodeLabel(node)} has written no log lines yet`);
      shown.forEach((s, i) => {
        // One log alone prints bare lines (for grep); several get tail's headers.
        if (streams.length > 1) ctx.out(`${i ? "\n" : ""}==> ${s} <==`);
        // A honeypot prints what attackers send it: control characters would drive the terminal.
        for (const line of picked[s]!) ctx.out(clean(line));
      });
    }),
  );

  withConnection(timeout(program.command("metrics").description("show a honeypot's CPU, memory, uptime, restarts and events relayed").argument("<node>", "node id, or node name").argument("<pot>", "honeypot id"))).action(
    action<{ timeout: number }>(async (ctx, [ref, pot], opts) => {
      const potId = checkPotId(pot!);
      const node = await ctx.api.resolveNode(ref!);
      const a = await ask<PotMetricsData>(ctx, node, { GetPotMetrics: potId }, opts.timeout);
      if (!a.ok || !a.data) refused(node, potId, a);
      const m = a.data;
      if (ctx.json) return ctx.printJson({ node_id: node.node_id, node_name: node.node_name, ...m });
      const rows: [string, string][] = [
        ["pot", potId],
        ["node", nodeLabel(node)],
        ["status", clean(m.status)],
        ["pid", m.pid === null ? "-" : String(m.pid)],
        ["uptime", formatUptime(m.uptime_s)],
        ["cpu", m.cpu_seconds === null ? "-" : `${m.cpu_seconds} s (${m.cpu_percent ?? 0}% of one core on average)`],
        ["memory", `${formatBytes(m.rss_bytes)}${m.processes ? ` in ${m.processes} process(es)` : ""}`],
        ["restarts", String(m.restarts)],
        ["events relayed", String(m.events_relayed)],
      ];
      for (const [k, v] of rows) ctx.out(`${k.padEnd(15)}${v}`);
    }),
  );

  withConnection(
    timeout(
      program
        .command("remove")
        .description("stop a honeypot and delete it and its files from its node and from Core's registry (also clears a failed install, and an External pot from the registry)")
        .argument("<node>", "node id, or node name (0: an External pot of no node)")
        .argument("<pot>", "honeypot id"),
    ),
  ).action(
    action<{ timeout: number }>(async (ctx, [ref, pot], opts) => {
      const potId = checkPotId(pot!);
      // Node 0 is no node: External pots whose events name none (`honeybee pots` lists them so).
      const node = toU64(ref!) === NO_NODE ? { node_id: NO_NODE, node_name: "(no node)" } : await ctx.api.resolveNode(ref!);
      const a = await ask<RemovedPotData>(ctx, node, { RemovePot: potId }, opts.timeout);
      if (ctx.json) ctx.printJson({ node_id: node.node_id, node_name: node.node_name, pot_id: potId, ok: a.ok, removed: a.data?.removed ?? false, message: a.message });
      if (!a.ok) throw new CliError(`node ${nodeLabel(node)} could not remove ${potId}: ${clean(a.message)}`);
      if (ctx.json) return;
      if (node.node_id === NO_NODE) ctx.out(`${potId} had no node; removed it from Core's registry`);
      else ctx.out(a.data?.removed === false ? `${potId} was not on node ${nodeLabel(node)}; removed it from Core's registry` : `removed ${potId} from node ${nodeLabel(node)}`);
    }),
  );
}
