/**
 * What every management command shares: the connection options (`--api`, `--ws`, `--json`,
 * with HONEYBEE_API / HONEYBEE_WS / HONEYBEE_TOKEN), one-line errors with the exit codes of
 * errors.ts, and where output goes (results on stdout, progress on stderr).
 */
import { type Command, InvalidArgumentError, Option } from "commander";
import { stringify } from "../protocol/json";
import { ApiClient, DEFAULT_API, DEFAULT_WS, baseUrl } from "./client";
import { CliError, EXIT_USAGE } from "./errors";
import { clean, terminalText } from "./table";

export interface Ctx {
  api: ApiClient;
  ws: string;
  token: string | undefined;
  json: boolean;
  /** Terminal width when stdout is a terminal: tables shrink to it; pipes get whole lines. */
  width: number | undefined;
  /** A line of the result, on stdout. */
  out(text: string): void;
  /** A line of progress for a human, on stderr; silent with --json so scripts see only data. */
  progress(text: string): void;
  /** The whole result as one JSON document (exact node ids). */
  printJson(value: unknown): void;
}

function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** Usage errors in one line that names the help to read, instead of the whole help text. */
export function oneLineErrors(cmd: Command): Command {
  return cmd.showHelpAfterError(false).configureOutput({
    outputError: (text, write) => write(`honeybee: ${text.trim().replace(/^error: /, "").replace(/\.$/, "")}; see "${commandPath(cmd)} --help"\n`),
  });
}

/** Adds the connection and output options to a command. */
export function withConnection(cmd: Command): Command {
  cmd
    .addOption(new Option("--api <url>", "Core's REST API").env("HONEYBEE_API").default(DEFAULT_API))
    .addOption(new Option("--ws <url>", "Core's WebSocket proxy").env("HONEYBEE_WS").default(DEFAULT_WS))
    .addOption(new Option("--token <token>", "API token, when Core has tokens configured").env("HONEYBEE_TOKEN"))
    .option("--json", "print JSON for scripts instead of a table");
  return oneLineErrors(cmd);
}

/**
 * Wraps a command's action: builds the context from its options and turns a CliError into one
 * line on stderr and its exit code. Usage errors go through commander, like its own, so that
 * they look the same and exit 2.
 */
export function action<O extends object>(run: (ctx: Ctx, args: string[], opts: O, cmd: Command) => Promise<void>) {
  return async (...params: unknown[]): Promise<void> => {
    const cmd = params[params.length - 1] as Command;
    const opts = cmd.opts() as O & { api?: string; ws?: string; token?: string; json?: boolean };
    try {
      const json = opts.json === true;
      const ctx: Ctx = {
        api: new ApiClient(baseUrl(opts.api ?? DEFAULT_API, ["http:", "https:"], "--api"), opts.token || undefined),
        ws: baseUrl(opts.ws ?? DEFAULT_WS, ["ws:", "wss:"], "--ws"),
        token: opts.token || undefined,
        json,
        width: process.stdout.isTTY ? process.stdout.columns : undefined,
        out: (text) => void process.stdout.write(terminalText(text) + "\n"),
        progress: (text) => void (json || process.stderr.write(terminalText(text) + "\n")),
        printJson: (value) => void process.stdout.write(jsonText(value) + "\n"),
      };
      await run(ctx, cmd.args.slice(0, cmd.registeredArguments.length), opts, cmd);
    } catch (e) {
      if (!(e instanceof CliError)) throw e;
      if (e.exitCode === EXIT_USAGE) cmd.error(clean(e.message), { exitCode: EXIT_USAGE, code: "honeybee.usage" });
      process.stderr.write(`honeybee: ${clean(e.message)}\n`);
      process.exitCode = e.exitCode;
    }
  };
}

/**
 * JSON for a terminal or a script: JSON escapes C0 controls itself; DEL and the C1 controls
 * (0x9b is a one-byte CSI on some terminals) are escaped too, which leaves the same value.
 */
export function jsonText(value: unknown): string {
  return stringify(value).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A commander argParser for a whole number in a range; commander reports a bad one as a usage error. */
export function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}
