/**
 * What a container "prints" for the command it was given. Nothing is ever run: the command is
 * read as data and a handful of the reconnaissance commands bots start with (`id`, `uname -a`,
 * `cat /etc/os-release`, `hostname`, `whoami`, `echo`) get the answer the image would give, or
 * the Ubuntu host's after `chroot` into a bind of `/` or `nsenter`. Anything else prints nothing
 * and succeeds, as a download-and-run one-liner would on a box whose output goes nowhere.
 */
import { KERNEL, KERNEL_BUILD } from "./facts.ts";
import { type Flavour, readFile, rootListing } from "./files.ts";

export interface RunContext {
  /** The container's filesystem. */
  flavour: Flavour;
  /** The container's host name (its short id) and the host's. */
  hostname: string;
  hostHostname: string;
  /** Paths inside the container where the host's `/` is bound (`-v /:/mnt` gives "/mnt"). */
  hostMounts: string[];
  ncpu: number;
}

export interface Output {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** Every command was one the emulation answers, so the process is over; false: it may still run. */
  finished: boolean;
}

/** Bounds: a script is data from the attacker, so its size and depth are capped. */
const MAX_SCRIPT = 16 * 1024;
const MAX_COMMANDS = 64;
const MAX_DEPTH = 4;
const SHELLS = new Set(["sh", "bash", "ash", "dash", "zsh", "busybox"]);
/** nsenter's options that take a value as the next word. */
const NSENTER_VALUE = new Set(["-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd", "-r", "--root"]);

export function run(argv: string[], ctx: RunContext): Output {
  const out: Output = { stdout: "", stderr: "", exitCode: 0, finished: true };
  runArgv(argv, { ...ctx }, out, 0);
  return out;
}

function runArgv(argv: string[], ctx: RunContext, out: Output, depth: number): void {
  if (depth > MAX_DEPTH || argv.length === 0) return;
  const [cmd, ...args] = argv;
  const base = cmd!.split("/").pop() ?? "";
  if (base === "chroot") {
    const dir = normalise(args[0] ?? "");
    const toHost = ctx.hostMounts.includes(dir);
    // chroot (and nsenter) with no command start an interactive shell.
    if (args.length < 2) out.finished = false;
    runArgv(args.slice(1), toHost ? { ...ctx, flavour: "host", hostname: ctx.hostHostname, hostMounts: ["/"] } : ctx, out, depth + 1);
    return;
  }
  if (base === "nsenter") {
    let i = 0;
    while (i < args.length && args[i]!.startsWith("-")) {
      if (args[i] === "--") {
        i++;
        break;
      }
      i += NSENTER_VALUE.has(args[i]!) ? 2 : 1;
    }
    if (i >= args.length) out.finished = false;
    runArgv(args.slice(i), { ...ctx, flavour: "host", hostname: ctx.hostHostname, hostMounts: ["/"] }, out, depth + 1);
    return;
  }
  if (SHELLS.has(base)) {
    const shellArgs = base === "busybox" ? args.slice(1) : args;
    if (base === "busybox" && !SHELLS.has(args[0] ?? "")) return simple(args, ctx, out);
    const c = shellArgs.indexOf("-c");
    if (c >= 0 && shellArgs[c + 1] !== undefined) runScript(shellArgs[c + 1]!, ctx, out, depth + 1);
    // A shell without a script reads its stdin: it lives as long as that stays open.
    else out.finished = false;
    return;
  }
  if (base === "env" || base === "nohup" || base === "exec" || base === "sudo") {
    let i = 0;
    while (i < args.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(args[i]!) || args[i]!.startsWith("-"))) i++;
    runArgv(args.slice(i), ctx, out, depth + 1);
    return;
  }
  if (base === "timeout") {
    runArgv(args.filter((a) => !a.startsWith("-")).slice(1), ctx, out, depth + 1);
    return;
  }
  simple(argv, ctx, out);
}

/** A shell script: commands joined by ; && || and newlines; a pipeline's output is not guessed. */
function runScript(script: string, ctx: RunContext, out: Output, depth: number): void {
  const commands = split(script.slice(0, MAX_SCRIPT)).slice(0, MAX_COMMANDS);
  for (const { words, op, piped } of commands) {
    if (op === "&&" && out.exitCode !== 0) continue;
    if (op === "||" && out.exitCode === 0) continue;
    if (piped) {
      out.finished = false;
      continue;
    }
    out.exitCode = 0;
    runArgv(words, ctx, out, depth);
  }
}

interface Command {
  words: string[];
  /** The operator before this command. */
  op: ";" | "&&" | "||";
  /** Part of a pipeline. */
  piped: boolean;
}

/** Splits a script into simple commands, with sh's quoting; expansions stay literal text. */
export function split(script: string): Command[] {
  const commands: Command[] = [];
  let words: string[] = [];
  let word: string | null = null;
  let op: Command["op"] = ";";
  let pipedIn = false;
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = (next: Command["op"], pipeOut: boolean) => {
    endWord();
    if (words.length > 0) commands.push({ words, op, piped: pipedIn || pipeOut });
    words = [];
    op = next;
    pipedIn = pipeOut;
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      word = (word ?? "") + script.slice(i + 1, end < 0 ? script.length : end);
      i = end < 0 ? script.length : end;
    } else if (c === '"') {
      let text = "";
      for (i++; i < script.length && script[i] !== '"'; i++) {
        if (script[i] === "\\" && i + 1 < script.length && '"\\$`'.includes(script[i + 1]!)) i++;
        text += script[i];
      }
      word = (word ?? "") + text;
    } else if (c === "\\") {
      if (script[i + 1] !== "\n") word = (word ?? "") + (script[i + 1] ?? "");
      i++;
    } else if (c === "#" && word === null) {
      while (i < script.length && script[i] !== "\n") i++;
      endCommand(";", false);
    } else if (c === ";" || c === "\n") {
      endCommand(";", false);
    } else if (c === "&" && script[i + 1] === "&") {
      endCommand("&&", false);
      i++;
    } else if (c === "|" && script[i + 1] === "|") {
      endCommand("||", false);
      i++;
    } else if (c === "|") {
      endCommand(";", true);
    } else if (c === "&") {
      endCommand(";", false);
    } else if (c === " " || c === "\t") {
      endWord();
    } else {
      word = (word ?? "") + c;
    }
  }
  endCommand(";", false);
  return commands;
}

function normalise(path: string): string {
  const p = `/${path}`.replace(/\/+/g, "/").replace(/\/\.$/, "/");
  return p.length > 1 ? p.replace(/\/$/, "") : p;
}

/** A path as seen from this root: under a bind of the host's `/` it is the host's file. */
function resolve(path: string, ctx: RunContext): { flavour: Flavour; path: string; hostname: string } {
  const p = normalise(path.startsWith("/") ? path : `/${path}`);
  for (const mount of ctx.hostMounts) {
    if (mount === "/") continue;
    if (p === mount || p.startsWith(`${mount}/`)) return { flavour: "host", path: p.slice(mount.length) || "/", hostname: ctx.hostHostname };
  }
  return { flavour: ctx.flavour, path: p, hostname: ctx.hostname };
}

function simple(argv: string[], ctx: RunContext, out: Output): void {
  const [cmd, ...args] = argv;
  const base = cmd!.split("/").pop() ?? "";
  const gnu = ctx.flavour !== "alpine";
  switch (base) {
    case "id":
      out.stdout += gnu ? "uid=0(root) gid=0(root) groups=0(root)\n" : "uid=0(root) gid=0(root) groups=0(root),1(bin),2(daemon),3(sys),4(adm),6(disk),10(wheel),11(floppy),20(dialout),26(tape),27(video)\n";
      return;
    case "whoami":
      out.stdout += "root\n";
      return;
    case "hostname":
      out.stdout += `${ctx.hostname}\n`;
      return;
    case "pwd":
      out.stdout += "/\n";
      return;
    case "nproc":
      out.stdout += `${ctx.ncpu}\n`;
      return;
    case "true":
      return;
    case "false":
      out.exitCode = 1;
      return;
    case "echo": {
      const noNewline = args[0] === "-n";
      out.stdout += (noNewline ? args.slice(1) : args).join(" ") + (noNewline ? "" : "\n");
      return;
    }
    case "uname":
      out.stdout += `${uname(args, ctx)}\n`;
      return;
    case "cat":
      for (const path of args.filter((a) => !a.startsWith("-"))) {
        const at = resolve(path, ctx);
        const text = readFile(at.flavour, at.path, at.hostname);
        if (text !== null) out.stdout += text;
        else {
          out.stderr += gnu ? `cat: ${path}: No such file or directory\n` : `cat: can't open '${path}': No such file or directory\n`;
          out.exitCode = 1;
        }
      }
      return;
    case "ls": {
      const dirs = args.filter((a) => !a.startsWith("-"));
      if (dirs.length === 0 || normalise(dirs[0]!) === "/") out.stdout += `${rootListing(ctx.flavour).join("\n")}\n`;
      else if (resolve(dirs[0]!, ctx).path === "/") out.stdout += `${rootListing("host").join("\n")}\n`;
      return;
    }
    default:
      out.finished = false;
  }
}

function uname(args: string[], ctx: RunContext): string {
  const flags = new Set(args.join("").replace(/-/g, "").split(""));
  const machine = "x86_64";
  const gnu = ctx.flavour !== "alpine";
  if (flags.has("a")) {
    return gnu
      ? `Linux ${ctx.hostname} ${KERNEL} ${KERNEL_BUILD} ${machine} ${machine} ${machine} GNU/Linux`
      : `Linux ${ctx.hostname} ${KERNEL} ${KERNEL_BUILD} ${machine} Linux`;
  }
  const parts: string[] = [];
  if (flags.has("s") || flags.size === 0) parts.push("Linux");
  if (flags.has("n")) parts.push(ctx.hostname);
  if (flags.has("r")) parts.push(KERNEL);
  if (flags.has("v")) parts.push(KERNEL_BUILD);
  if (flags.has("m")) parts.push(machine);
  if (flags.has("o")) parts.push(gnu ? "GNU/Linux" : "Linux");
  return parts.join(" ");
}

/** A command line as a shell would show it: words quoted only where they need it. */
export function commandLine(argv: string[]): string {
  return argv.map((w) => (w !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(" ");
}
