/** Commands that walk and change the fake filesystem. */
import { INSTALL_DATE } from "../host.ts";
import { MAX_OUTPUT, type Command, type Shell } from "../shell.ts";
import { dateText } from "./system.ts";
import { flags } from "./flags.ts";

const TERMINAL_WIDTH = 80;

/** GNU ls's column layout for a terminal: as many columns as fit, filled top to bottom. */
export function columns(names: string[], width = TERMINAL_WIDTH): string {
  if (names.length === 0) return "";
  for (let cols = names.length; cols > 1; cols--) {
    const rows = Math.ceil(names.length / cols);
    if (Math.ceil(names.length / rows) !== cols) continue;
    const widths = Array.from({ length: cols }, (_, c) => Math.max(...names.slice(c * rows, c * rows + rows).map((n) => n.length)) + 2);
    if (widths.reduce((a, b) => a + b, 0) - 2 > width) continue;
    const lines: string[] = [];
    for (let r = 0; r < rows; r++) {
      const cells = widths.map((_, c) => names[c * rows + r]).filter((n) => n !== undefined);
      // Only trailing columns lack a row's cell, so cell c still sits in column c.
      lines.push(cells.map((n, c) => (c === cells.length - 1 ? n : n.padEnd(widths[c]!))).join(""));
    }
    return `${lines.join("\n")}\n`;
  }
  return `${names.join("\n")}\n`;
}

function longLine(shell: Shell, dir: string, name: string): { line: string; blocks: number } {
  const path = name === "." ? dir : name === ".." ? shell.fs.resolve(dir, "..", shell.home) : `${dir === "/" ? "" : dir}/${name}`;
  const absolute = shell.fs.isLink(path);
  // Debian's merged-/usr links are relative ("bin -> usr/bin").
  const link = absolute && dir === "/" ? absolute.slice(1) : absolute;
  const kind = link ? "link" : shell.fs.kind(path);
  const size = link ? link.length : shell.fs.size(path);
  const mode = kind === "link" ? "lrwxrwxrwx" : kind === "dir" ? "drwxr-xr-x" : "-rw-r--r--";
  const owner = path.startsWith(shell.home) && shell.uid !== 0 ? shell.username : "root";
  const when = dateText(INSTALL_DATE, "%b %e  %Y");
  const shown = link ? `${name} -> ${link}` : name;
  return {
    line: `${mode} ${kind === "dir" ? 2 : 1} ${owner} ${owner} ${String(size).padStart(5)} ${when} ${shown}`,
    blocks: kind === "file" ? Math.ceil(size / 4096) * 4 : kind === "dir" ? 4 : 0,
  };
}

const ls: Command = (shell, args, io) => {
  const { short, operands } = flags(args);
  const all = short.has("a");
  const hidden = all || short.has("A");
  const targets = operands.length > 0 ? operands : ["."];
  let stdout = "";
  let stderr = "";
  let status = 0;
  const render = (dir: string, names: string[]): string => {
    if (short.has("l")) {
      const rows = names.map((n) => longLine(shell, dir, n));
      return `total ${rows.reduce((a, r) => a + r.blocks, 0)}\n${rows.map((r) => `${r.line}\n`).join("")}`;
    }
    return io.toTerminal && !short.has("1") ? columns(names) : names.map((n) => `${n}\n`).join("");
  };
  targets.forEach((target, i) => {
    const path = shell.resolve(target);
    const kind = shell.fs.kind(path);
    if (!kind) {
      stderr += `ls: cannot access '${target}': No such file or directory\n`;
      status = 2;
      return;
    }
    if (kind === "file" || short.has("d")) {
      stdout += render(path.slice(0, path.lastIndexOf("/")) || "/", [target]);
      return;
    }
    const names = (shell.fs.list(path) ?? []).filter((n) => hidden || !n.startsWith("."));
    if (targets.length > 1) stdout += `${i > 0 ? "\n" : ""}${target}:\n`;
    stdout += render(path, all ? [".", "..", ...names] : names);
  });
  return { stdout, stderr, status };
};

const cd: Command = (shell, args) => {
  const target = args.find((a) => !a.startsWith("-") || a === "-") ?? shell.home;
  const path = target === "-" ? (shell.env.get("OLDPWD") ?? shell.cwd) : shell.resolve(target);
  const kind = shell.fs.kind(path);
  if (kind !== "dir") {
    return { stderr: `${shell.errorPrefix}cd: ${target}: ${kind ? "Not a directory" : "No such file or directory"}\n`, status: 1 };
  }
  shell.env.set("OLDPWD", shell.cwd);
  shell.cwd = path;
  return { stdout: target === "-" ? `${path}\n` : "" };
};

export function readable(shell: Shell, command: string, target: string): { text: string } | { error: string } {
  const path = shell.resolve(target);
  const kind = shell.fs.kind(path);
  if (kind === "dir") return { error: `${command}: ${target}: Is a directory\n` };
  if (kind === null) return { error: `${command}: ${target}: No such file or directory\n` };
  if (path === "/etc/shadow" && shell.uid !== 0) return { error: `${command}: ${target}: Permission denied\n` };
  return { text: shell.fs.read(path) ?? "" };
}

/** Concatenates the operands (or stdin), as cat, and the text filters before their own work, do. */
export function gather(shell: Shell, command: string, operands: string[], stdin: string): { text: string; stderr: string; status: number } {
  if (operands.length === 0) return { text: stdin, stderr: "", status: 0 };
  let text = "";
  let stderr = "";
  for (const target of operands) {
    if (text.length > MAX_OUTPUT) break;
    const r = target === "-" ? { text: stdin } : readable(shell, command, target);
    if ("error" in r) stderr += r.error;
    else text += r.text;
  }
  return { text, stderr, status: stderr ? 1 : 0 };
}

const cat: Command = (shell, args, io) => {
  const { text, stderr, status } = gather(shell, "cat", flags(args).operands, io.stdin);
  return { stdout: text, stderr, status };
};

/** Backslash escapes of `echo -e` and `printf`. */
export function unescape(text: string): { text: string; stop: boolean } {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== "\\" || i + 1 >= text.length) {
      out += text.charAt(i);
      continue;
    }
    const c = text.charAt(++i);
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", a: "\x07", b: "\b", e: "\x1b", f: "\f", v: "\v", "\\": "\\" };
    const escaped = simple[c];
    if (escaped !== undefined) out += escaped;
    else if (c === "c") return { text: out, stop: true };
    else if (c === "x" && /^[0-9a-fA-F]/.test(text[i + 1] ?? "")) {
      const hex = /^[0-9a-fA-F]{1,2}/.exec(text.slice(i + 1))?.[0] ?? "";
      out += String.fromCharCode(Number.parseInt(hex, 16));
      i += hex.length;
    } else if (c === "0") {
      const oct = /^[0-7]{0,3}/.exec(text.slice(i + 1))?.[0] ?? "";
      out += String.fromCharCode(Number.parseInt(oct || "0", 8));
      i += oct.length;
    } else out += `\\${c}`;
  }
  return { text: out, stop: false };
}

const echo: Command = (_shell, args) => {
  let escapes = false;
  let newline = true;
  let i = 0;
  for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
    for (const c of args[i]!.slice(1)) {
      if (c === "n") newline = false;
      else escapes = c === "e";
    }
  }
  const joined = args.slice(i).join(" ");
  if (!escapes) return { stdout: joined + (newline ? "\n" : "") };
  const { text, stop } = unescape(joined);
  return { stdout: text + (newline && !stop ? "\n" : "") };
};

const printf: Command = (_shell, args) => {
  const [format, ...values] = args;
  if (format === undefined) return { stderr: "printf: usage: printf [-v var] format [arguments]\n", status: 2 };
  let next = 0;
  const filled = format.replace(/%([%sdbc])/g, (_all, spec: string) => {
    if (spec === "%") return "%";
    const value = values[next++] ?? "";
    if (spec === "d") return String(Number.parseInt(value, 10) || 0);
    if (spec === "b") return unescape(value).text;
    return spec === "c" ? value.slice(0, 1) : value;
  });
  return { stdout: unescape(filled).text };
};

type OperandAction = (shell: Shell, path: string, target: string, options: Set<string>) => string | null;

function eachOperand(command: string, act: OperandAction): Command {
  return (shell, args) => {
    const { short, operands } = flags(args);
    let stderr = "";
    for (const target of operands) {
      const error = act(shell, shell.resolve(target), target, short);
      if (error) stderr += `${command}: ${error}\n`;
    }
    return { stderr, status: stderr ? 1 : 0 };
  };
}

const touch = eachOperand("touch", (shell, path, target) => {
  if (shell.fs.kind(path)) return null;
  const error = shell.fs.write(path, "", true);
  return error ? `cannot touch '${target}': ${error}` : null;
});

const mkdir = eachOperand("mkdir", (shell, path, target, options) => {
  if (options.has("p") && shell.fs.kind(path) === "dir") return null;
  const error = shell.fs.mkdir(path);
  return error ? `cannot create directory '${target}': ${error}` : null;
});

const rm = eachOperand("rm", (shell, path, target, options) => {
  const kind = shell.fs.kind(path);
  if (kind === "dir" && !options.has("r") && !options.has("R")) return `cannot remove '${target}': Is a directory`;
  if (shell.fs.remove(path) || options.has("f") || kind) return null;
  return `cannot remove '${target}': No such file or directory`;
});

function copy(command: "cp" | "mv"): Command {
  return (shell, args) => {
    const operands = flags(args).operands;
    if (operands.length < 2) return { stderr: `${command}: missing file operand\nTry '${command} --help' for more information.\n`, status: 1 };
    const [source, target] = [operands[0]!, operands[operands.length - 1]!];
    const from = shell.resolve(source);
    const text = shell.fs.read(from);
    if (text === null) return { stderr: `${command}: cannot stat '${source}': No such file or directory\n`, status: 1 };
    let to = shell.resolve(target);
    if (shell.fs.kind(to) === "dir") to = `${to === "/" ? "" : to}/${from.slice(from.lastIndexOf("/") + 1)}`;
    const error = shell.fs.write(to, text, false);
    if (error) return { stderr: `${command}: cannot create regular file '${target}': ${error}\n`, status: 1 };
    if (command === "mv") shell.fs.remove(from);
    return {};
  };
}

export const FILE_COMMANDS: Record<string, Command> = {
  ls,
  dir: ls,
  cd,
  pwd: (shell) => ({ stdout: `${shell.cwd}\n` }),
  cat,
  echo,
  printf,
  touch,
  mkdir,
  rm,
  cp: copy("cp"),
  mv: copy("mv"),
  ln: () => ({}),
};
