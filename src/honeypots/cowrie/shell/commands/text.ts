/** Text filters, for the pipelines bots build around /proc/cpuinfo, free and ls. */
import type { Command } from "../shell.ts";
import { gather } from "./files.ts";
import { countOption, flags } from "./flags.ts";

function lines(text: string): string[] {
  const all = text.split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

function joinLines(list: string[]): string {
  return list.map((l) => `${l}\n`).join("");
}

function pattern(source: string, ignoreCase: boolean): RegExp {
  const translated = source.replace(/\\([|(){}+?])/g, "$1");
  try {
    return new RegExp(translated, ignoreCase ? "i" : "");
  } catch {
    return new RegExp(translated.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), ignoreCase ? "i" : "");
  }
}

const grep: Command = (shell, args, io) => {
  const options = new Set<string>();
  const rest: string[] = [];
  let expression: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-e" && i + 1 < args.length) expression = args[++i];
    else if (/^-[a-zA-Z]+$/.test(arg)) for (const c of arg.slice(1)) options.add(c);
    else rest.push(arg);
  }
  expression ??= rest.shift();
  if (expression === undefined) return { stderr: "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", status: 2 };
  const input = gather(shell, "grep", rest, io.stdin);
  const re = pattern(expression, options.has("i"));
  const matched = lines(input.text).filter((l) => re.test(l) !== options.has("v"));
  const shown = options.has("c") ? [String(matched.length)] : options.has("q") ? [] : matched;
  return { stdout: joinLines(shown), stderr: input.stderr, status: input.stderr ? 2 : matched.length > 0 ? 0 : 1 };
};

function slice(which: "head" | "tail"): Command {
  return (shell, args, io) => {
    const { count, rest } = countOption(args, "n", 10);
    const input = gather(shell, which, rest, io.stdin);
    const all = lines(input.text);
    const picked = which === "head" ? all.slice(0, count) : all.slice(Math.max(0, all.length - count));
    return { stdout: joinLines(picked), stderr: input.stderr, status: input.status };
  };
}

const wc: Command = (shell, args, io) => {
  const { short, operands } = flags(args);
  const input = gather(shell, "wc", operands, io.stdin);
  const counts: Array<[string, number]> = [
    ["l", (input.text.match(/\n/g) ?? []).length],
    ["w", input.text.split(/\s+/).filter(Boolean).length],
    ["c", Buffer.byteLength(input.text)],
  ];
  const picked = counts.filter(([c]) => short.has(c) || (c === "c" && short.has("m")));
  const shown = picked.length > 0 ? picked : counts;
  // One count on stdin is printed bare; several are right-aligned in 7 columns, like coreutils.
  const text = shown.length === 1 && operands.length === 0 ? String(shown[0]![1]) : shown.map(([, n]) => String(n).padStart(7)).join(" ");
  return { stdout: `${text}${operands.length === 1 ? ` ${operands[0]}` : ""}\n`, stderr: input.stderr, status: input.status };
};

/**
 * The awk programs bots send: `{print $4,$5}`, `NR==2 {print $2;}`, `/Mem/ {print $2}`, with -F.
 * Anything richer prints nothing, which a bot reads as an odd box, not as a honeypot.
 */
const awk: Command = (shell, args, io) => {
  let separator: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-F" && i + 1 < args.length) separator = args[++i];
    else if (arg.startsWith("-F")) separator = arg.slice(2);
    else rest.push(arg);
  }
  const program = rest.shift() ?? "";
  const input = gather(shell, "awk", rest, io.stdin);
  const match = /^\s*(?:(N?F?NR)\s*==\s*(\d+)|\/([^/]*)\/)?\s*\{\s*print\s*([^}]*?);?\s*\}\s*$/.exec(program);
  if (!match) return { stderr: input.stderr };
  // The print list's group is not optional: it is set (maybe empty) whenever the program matches.
  const [, counter, line, regex, printed = ""] = match;
  const filter = regex !== undefined ? pattern(regex, false) : undefined;
  const out: string[] = [];
  lines(input.text).forEach((text, i) => {
    if (counter && i + 1 !== Number(line)) return;
    if (filter && !filter.test(text)) return;
    const fields = separator ? text.split(separator) : text.trim().split(/\s+/);
    const value = (expr: string): string => {
      const field = /^\$(\d+)$/.exec(expr);
      if (field) return Number(field[1]) === 0 ? text : (fields[Number(field[1]) - 1] ?? "");
      if (expr === "NF") return String(fields.length);
      if (expr === "NR") return String(i + 1);
      return /^".*"$/.test(expr) ? expr.slice(1, -1) : "";
    };
    const items = printed.trim() === "" ? ["$0"] : printed.split(",").map((e) => e.trim());
    out.push(items.map((item) => item.split(/\s+/).map(value).join("")).join(" "));
  });
  return { stdout: joinLines(out), stderr: input.stderr, status: input.status };
};

const sort: Command = (shell, args, io) => {
  const { short, operands } = flags(args);
  const input = gather(shell, "sort", operands, io.stdin);
  let sorted = lines(input.text).sort(short.has("n") ? (a, b) => Number.parseFloat(a) - Number.parseFloat(b) : undefined);
  if (short.has("r")) sorted = sorted.reverse();
  if (short.has("u")) sorted = [...new Set(sorted)];
  return { stdout: joinLines(sorted), stderr: input.stderr, status: input.status };
};

const uniq: Command = (shell, args, io) => {
  const input = gather(shell, "uniq", flags(args).operands, io.stdin);
  return { stdout: joinLines(lines(input.text).filter((l, i, all) => i === 0 || all[i - 1] !== l)), stderr: input.stderr };
};

const cut: Command = (shell, args, io) => {
  let delimiter = "\t";
  let list = "";
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [flag, inline] = [arg.slice(0, 2), arg.slice(2)];
    if (flag === "-d") delimiter = inline || args[++i] || "\t";
    else if (flag === "-f") list = inline || args[++i] || "";
    else rest.push(arg);
  }
  if (!list) return { stderr: "cut: you must specify a list of bytes, characters, or fields\nTry 'cut --help' for more information.\n", status: 1 };
  const wanted = list.split(",").flatMap((range) => {
    const [from, to] = range.split("-").map((n) => Number.parseInt(n, 10));
    // An open or huge range stops at 256 fields: no line here has more, and the list stays small.
    const first = from || 1;
    return range.includes("-") ? Array.from({ length: Math.max(0, Math.min(to || 256, 256) - first + 1) }, (_, k) => first + k) : [Number.parseInt(range, 10)];
  });
  const input = gather(shell, "cut", rest, io.stdin);
  const out = lines(input.text).map((l) => {
    const parts = l.split(delimiter);
    return parts.length === 1 ? l : wanted.filter((f) => f <= parts.length).map((f) => parts[f - 1] ?? "").join(delimiter);
  });
  return { stdout: joinLines(out), stderr: input.stderr, status: input.status };
};

export const TEXT_COMMANDS: Record<string, Command> = {
  grep,
  egrep: grep,
  head: slice("head"),
  tail: slice("tail"),
  wc,
  awk,
  sort,
  uniq,
  cut,
};
