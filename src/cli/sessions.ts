/**
 * `honeybee sessions` (attack sessions, filtered) and `honeybee session ID` (one session's
 * logins, commands, files and events; `--replay` plays its terminal recording).
 */
import { InvalidArgumentError, type Command } from "commander";
import type { SessionDetail, SessionSummary } from "../modules/sessions";
import { toU64 } from "../protocol/json";
import { type Ctx, action, wholeNumber, withConnection } from "./command";
import { ApiError } from "./client";
import { CliError, usageError } from "./errors";
import { eventsTable, shortTime } from "./event-format";
import { parseTime } from "./events";
import { CastError, TerminalModes, parseCast, safeOutput, schedule } from "./replay";
import { renderTable, type Column } from "./table";

interface SessionsOpts {
  node?: string;
  pot?: string;
  potType?: string;
  srcIp?: string;
  since?: string;
  until?: string;
  commands?: boolean;
  download?: boolean;
  login?: boolean;
  limit?: number;
  cursor?: string;
}

function badQuery(e: unknown): never {
  if (e instanceof ApiError && e.status === 400) throw usageError(e.message);
  throw e;
}

const flag = (v: boolean | undefined) => (v === undefined ? undefined : String(v));
const seconds = (s: number) => (s < 60 ? `${s.toFixed(1)} s` : s < 3600 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${(s / 3600).toFixed(1)} h`);

const COLUMNS: Column<SessionSummary>[] = [
  { header: "ID", value: (s) => String(s.id), right: true },
  { header: "START (UTC)", value: (s) => shortTime(s.start) },
  { header: "POT", value: (s) => s.pot_id ?? "-" },
  { header: "SOURCE", value: (s) => s.src_ip ?? "-" },
  { header: "DURATION", value: (s) => seconds(s.duration), right: true },
  { header: "LOGIN", value: (s) => (s.login_success ? `${s.username ?? ""} / ${s.password ?? ""}` : "-"), shrink: true },
  { header: "CMDS", value: (s) => String(s.commands), right: true },
  { header: "FILES", value: (s) => String(s.files), right: true },
  { header: "TTY", value: (s) => (s.recording ? "yes" : "-") },
];

export function sessionsTable(rows: SessionSummary[], width?: number): string {
  if (rows.length === 0) return "No sessions match.";
  return renderTable(COLUMNS, rows, width);
}

export function sessionText(s: SessionDetail, width?: number): string {
  const lines = [
    `Session ${s.id}: ${s.pot_type ?? "?"} session ${s.session} on ${s.pot_id ?? "?"}${s.node_id === null ? "" : ` (node ${s.node_id})`}`,
    `From ${s.src_ip ?? "?"}, ${shortTime(s.start)} to ${shortTime(s.end)} UTC (${seconds(s.duration)}), ${s.events} events${s.closed ? ", closed" : ", still open"}`,
    `Login: ${s.login_success ? `${s.username ?? ""} / ${s.password ?? ""}` : "none succeeded"}`,
  ];
  if (s.recording_file) lines.push(`Recording: ${s.recording_file.size} bytes, replay with: honeybee session ${s.id} --replay`);
  else if (s.recording) lines.push("Recording: made by the honeypot, not received from its node yet");
  if (s.credentials.length > 0)
    lines.push("", renderTable([{ header: "TIME (UTC)", value: (c: SessionDetail["credentials"][number]) => shortTime(c.timestamp) }, { header: "USERNAME", value: (c) => c.username ?? "", shrink: true }, { header: "PASSWORD", value: (c) => c.password ?? "", shrink: true }, { header: "RESULT", value: (c) => (c.success ? "success" : "failed") }], s.credentials, width));
  if (s.command_lines.length > 0)
    lines.push("", renderTable([{ header: "TIME (UTC)", value: (c: SessionDetail["command_lines"][number]) => shortTime(c.timestamp) }, { header: "COMMAND", value: (c) => c.input + (c.found ? "" : "   (not found)"), shrink: true, wrap: true }], s.command_lines, width));
  if (s.file_events.length > 0)
    lines.push("", renderTable([{ header: "TIME (UTC)", value: (f: SessionDetail["file_events"][number]) => shortTime(f.timestamp) }, { header: "FILE", value: (f) => f.url ?? f.filename ?? f.outfile ?? "", shrink: true }, { header: "SHA-256", value: (f) => f.shasum ?? "-" }], s.file_events, width));
  lines.push("", eventsTable(s.session_events, width));
  if (s.truncated) lines.push(`(the first ${s.session_events.length} of ${s.events} events)`);
  return lines.join("\n");
}

/** A session by Core's id, or by the honeypot's session id (the newest one with it). */
async function findSession(ctx: Ctx, ref: string): Promise<number> {
  if (/^\d{1,16}$/.test(ref)) return Number(ref);
  const page = await ctx.api.get<{ sessions: SessionSummary[] }>("/api/v1/sessions", { session: ref, limit: "1" }).catch(badQuery);
  if (page.sessions.length === 0) throw new CliError(`no session ${ref}: give Core's session id (the ID column of "honeybee sessions") or the honeypot's session id`);
  return page.sessions[0]!.id;
}

/** Writes the recording's output at its pace; resolves when it has played. */
async function replay(text: string, speed: number, maxIdle: number | null): Promise<void> {
  let cast: ReturnType<typeof parseCast>;
  try {
    cast = parseCast(text);
  } catch (e) {
    if (e instanceof CastError) throw new CliError(e.message);
    throw e;
  }
  const idle = maxIdle ?? (typeof cast.header.idle_time_limit === "number" ? cast.header.idle_time_limit : null);
  const at = schedule(cast.output, speed, idle);
  const modes = new TerminalModes();
  let interrupted = false;
  // Ctrl-C mid-way through a full-screen program must not leave the terminal in its modes;
  // the exit waits until the resets are written, after whatever output went before them.
  const interrupt = (status: number) => () => {
    if (interrupted) return;
    interrupted = true;
    process.stdout.write(modes.resets(), () => process.exit(status));
  };
  const onSigint = interrupt(130);
  const onSigterm = interrupt(143);
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", onSigterm);
  try {
    const start = performance.now();
    for (let i = 0; i < cast.output.length; i++) {
      const wait = start + at[i]! - performance.now();
      if (wait > 1) await Bun.sleep(wait);
      if (interrupted) return;
      const passed = safeOutput(cast.output[i]![1]);
      modes.feed(passed);
      process.stdout.write(passed);
    }
    process.stdout.write(modes.resets());
  } finally {
    if (!interrupted) {
      process.off("SIGINT", onSigint);
      process.off("SIGTERM", onSigterm);
    }
  }
}

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError("expected a number above 0");
  return n;
};

export function registerSessionCommands(program: Command): void {
  const time = (v: string) => parseTime(v);
  withConnection(
    program
      .command("sessions")
      .description("list attack sessions (a connection's logins, commands and files), newest last")
      .option("--node <node>", "only sessions of this node (id or name)")
      .option("--pot <pot_id>", "only sessions of this honeypot")
      .option("--pot-type <kind>", "only sessions of this honeypot kind, e.g. cowrie")
      .option("--src-ip <address>", "only sessions from this address")
      .option("--since <time>", "with an event from this time on: ISO 8601, unix seconds, or an age such as 15m, 2h, 7d", time)
      .option("--until <time>", "begun before this time (same forms as --since)", time)
      .option("--commands", "only sessions where commands were typed")
      .option("--download", "only sessions that downloaded or uploaded a file")
      .option("--login", "only sessions where a login succeeded")
      .option("--limit <n>", "how many sessions (default 20)", wholeNumber(1, 1000))
      .option("--cursor <cursor>", "the next page: the cursor printed after the previous one", (v: string) => {
        if (!/^\d{1,16}$/.test(v)) throw new InvalidArgumentError('expected the number printed after "older sessions: add --cursor"');
        return v;
      }),
  ).action(
    action<SessionsOpts>(async (ctx, _args, o) => {
      const node_id = o.node === undefined ? undefined : (toU64(o.node)?.toString() ?? (await ctx.api.resolveNode(o.node)).node_id.toString());
      const query = {
        node_id,
        pot_id: o.pot,
        pot_type: o.potType,
        src_ip: o.srcIp,
        since: o.since,
        until: o.until,
        has_commands: flag(o.commands),
        has_download: flag(o.download),
        login_success: flag(o.login),
        limit: String(o.limit ?? 20),
        cursor: o.cursor,
      };
      const page = await ctx.api.get<{ sessions: SessionSummary[]; next_cursor: string | null }>("/api/v1/sessions", query).catch(badQuery);
      const sessions = [...page.sessions].reverse();
      if (ctx.json) return ctx.printJson({ sessions, next_cursor: page.next_cursor });
      ctx.out(sessionsTable(sessions, ctx.width));
      if (page.next_cursor) ctx.progress(`older sessions: add --cursor ${page.next_cursor}`);
    }),
  );

  withConnection(
    program
      .command("session")
      .description("one session: its logins, commands, files and events; --replay plays its terminal recording")
      .argument("<id>", 'Core\'s session id (the ID column of "honeybee sessions") or the honeypot\'s session id')
      .option("--replay", "play the session's terminal recording in this terminal, at its real pace")
      .option("--speed <n>", "with --replay: this many times faster (e.g. 2, 10)", positive)
      .option("--max-idle <seconds>", "with --replay: no pause longer than this", positive),
  ).action(
    action<{ replay?: boolean; speed?: number; maxIdle?: number }>(async (ctx, [ref], o) => {
      if (!o.replay && (o.speed !== undefined || o.maxIdle !== undefined)) throw usageError("--speed and --max-idle go with --replay");
      const id = await findSession(ctx, ref!);
      if (o.replay) return replay(await ctx.api.getText(`/api/v1/sessions/${id}/recording`), o.speed ?? 1, o.maxIdle ?? null);
      const s = await ctx.api.get<SessionDetail>(`/api/v1/sessions/${id}`);
      if (ctx.json) return ctx.printJson(s);
      ctx.out(sessionText(s, ctx.width));
    }),
  );
}
