/**
 * The device's /system/bin/sh (mksh) as far as bots use it: lists of commands joined by `;`,
 * `&&`, `||` and `|`, quotes, `$VAR` and `$(...)`, redirections (the output is dropped). Every
 * command is emulated by ./commands.ts; nothing is ever run, and no captured text is used as a
 * real path.
 */
import { COMMANDS, type CommandContext } from "./commands.ts";
import type { Product } from "./device.ts";
import { FakeFs } from "./filesystem.ts";

/** What a command printed, in order: fd 1 is stdout, fd 2 stderr (v2 shell streams keep them apart). */
export interface Chunk {
  fd: 1 | 2;
  text: string;
}

export interface ShellResult {
  out: Chunk[];
  code: number;
  /** Set when the line ran `exit`: the shell ends with this status. */
  exit?: number;
}

export const stdout = (text: string, code = 0): ShellResult => ({ out: text ? [{ fd: 1, text }] : [], code });
export const stderr = (text: string, code = 1): ShellResult => ({ out: [{ fd: 2, text }], code });

/** Everything a result printed, as a terminal shows it. */
export function textOf(out: Chunk[], fd?: 1 | 2): string {
  return out
    .filter((c) => fd === undefined || c.fd === fd)
    .map((c) => c.text)
    .join("");
}

type Op = ";" | "&&" | "||" | "|";
type Token = { word: string } | { op: Op; at: number };

/** Nested `$(...)` and `sh -c` deeper than this print nothing: bounds the work one line can ask for. */
const MAX_DEPTH = 4;
/** Output of one line at most (a loop of `cat`s in a pipeline must not grow without end). */
const MAX_OUTPUT = 256 * 1024;

export class AndroidShell {
  cwd = "/";
  status = 0;

  constructor(
    readonly fs: FakeFs,
    readonly props: Map<string, string>,
    readonly product: Product,
  ) {}

  get prompt(): string {
    return `${this.status ? `${this.status}|` : ""}${this.product.device}:${this.cwd} $ `;
  }

  run(line: string, depth = 0): ShellResult {
    if (depth > MAX_DEPTH) return { out: [], code: 1 };
    let segments: { text: string; op: Op | null }[];
    try {
      segments = this.split(line, depth);
    } catch (err) {
      this.status = 1;
      return stderr(`/system/bin/sh: syntax error: ${(err as Error).message}\n`);
    }
    const out: Chunk[] = [];
    let size = 0;
    let skip = false;
    let pipeline: string[] = [];
    for (const { text, op } of segments) {
      pipeline.push(text);
      if (op === "|") continue;
      if (!skip && pipeline.some((t) => t.trim() !== "")) {
        const result = this.pipeline(pipeline, depth);
        for (const chunk of result.out) {
          if (size >= MAX_OUTPUT) break;
          out.push(chunk.text.length > MAX_OUTPUT - size ? { fd: chunk.fd, text: chunk.text.slice(0, MAX_OUTPUT - size) } : chunk);
          size += chunk.text.length;
        }
        if (result.exit !== undefined) return { out, code: result.exit, exit: result.exit };
      }
      pipeline = [];
      skip = (op === "&&" && this.status !== 0) || (op === "||" && this.status === 0);
    }
    return { out, code: this.status };
  }

  /** The line cut at its operators, unexpanded: `$?` and `$(...)` are expanded as each command runs. */
  private split(line: string, depth: number): { text: string; op: Op | null }[] {
    const segments: { text: string; op: Op | null }[] = [];
    let from = 0;
    for (const token of this.tokenize(line, depth, false)) {
      if (!("op" in token)) continue;
      segments.push({ text: line.slice(from, token.at), op: token.op });
      from = token.at + token.op.length;
    }
    segments.push({ text: line.slice(from), op: null });
    return segments;
  }

  private pipeline(stages: string[], depth: number): ShellResult {
    let stdin: string | null = null;
    const errors: Chunk[] = [];
    let last: Chunk[] = [];
    for (const [i, text] of stages.entries()) {
      let words: string[];
      try {
        words = this.tokenize(text, depth, true).flatMap((t) => ("word" in t ? [t.word] : []));
      } catch (err) {
        this.status = 1;
        return stderr(`/system/bin/sh: syntax error: ${(err as Error).message}\n`);
      }
      const result = this.command(words, stdin, depth);
      if (result.exit !== undefined) return { ...result, out: [...errors, ...result.out] };
      if (i === stages.length - 1) {
        last = result.out;
        break;
      }
      errors.push(...result.out.filter((c) => c.fd === 2));
      stdin = textOf(result.out, 1);
    }
    return { out: [...errors, ...last], code: this.status };
  }

  private command(words: string[], stdin: string | null, depth: number): ShellResult {
    const { argv, drop } = redirections(words);
    if (argv.length === 0) return { out: [], code: this.status };
    const name = argv[0] as string;
    const base = name.includes("/") ? name.slice(name.lastIndexOf("/") + 1) : name;
    const ctx: CommandContext = { shell: this, argv, stdin, depth };
    let result: ShellResult;
    if (name.includes("/") && !name.startsWith("/system/bin/")) result = this.execute(name);
    else if (Object.hasOwn(COMMANDS, base)) result = COMMANDS[base]!(ctx);
    else result = stderr(`/system/bin/sh: ${name}: inaccessible or not found\n`, 127);
    this.status = result.code;
    return drop.size ? { ...result, out: result.out.filter((c) => !drop.has(c.fd)) } : result;
  }

  /** `./payload`: a pushed file runs (silently: nothing is ever executed); others fail as mksh says. */
  private execute(name: string): ShellResult {
    const node = this.fs.lookup(FakeFs.resolve(this.cwd, name));
    if (!node) return stderr(`/system/bin/sh: ${name}: inaccessible or not found\n`, 127);
    if (node.kind === "dir" || (node.perm & 0o111) === 0) return stderr(`/system/bin/sh: ${name}: can't execute: Permission denied\n`, 126);
    return stdout("");
  }

  /** Environment the shell user's mksh has. */
  variable(name: string): string {
    switch (name) {
      case "?":
        return String(this.status);
      case "PWD":
        return this.cwd;
      case "HOME":
        return "/";
      case "USER":
        return "shell";
      case "HOSTNAME":
        return this.product.device;
      case "TMPDIR":
        return "/data/local/tmp";
      case "SHELL":
        return "/bin/sh";
      case "PATH":
        return "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin";
      case "ANDROID_DATA":
        return "/data";
      case "ANDROID_ROOT":
        return "/system";
      case "EXTERNAL_STORAGE":
        return "/sdcard";
      default:
        return "";
    }
  }

  /** Words (expanded when `expand`) and operators; without `expand` nothing runs, only the shape is read. */
  private tokenize(line: string, depth: number, expand: boolean): Token[] {
    const tokens: Token[] = [];
    let word = "";
    let inWord = false;
    const flush = () => {
      if (inWord) tokens.push({ word });
      word = "";
      inWord = false;
    };
    const substitute = (start: number): [string, number] => {
      let level = 1;
      let i = start;
      for (; i < line.length && level > 0; i++) {
        if (line[i] === "(") level++;
        else if (line[i] === ")") level--;
      }
      if (level > 0) throw new Error("unclosed (");
      return [expand ? textOf(this.run(line.slice(start, i - 1), depth + 1).out, 1).replace(/\n+$/, "") : "", i];
    };
    const dollar = (i: number): [string, number] => {
      if (line[i + 1] === "(") return substitute(i + 2);
      const braced = line[i + 1] === "{" ? /^\{([A-Za-z_][A-Za-z0-9_]*|\?)\}/.exec(line.slice(i + 1)) : null;
      if (braced) return [expand ? this.variable(braced[1] as string) : "", i + 1 + braced[0].length];
      const plain = /^([A-Za-z_][A-Za-z0-9_]*|\?)/.exec(line.slice(i + 1));
      if (plain) return [expand ? this.variable(plain[1] as string) : "", i + 1 + plain[0].length];
      return ["$", i + 1];
    };
    let i = 0;
    while (i < line.length) {
      const c = line[i] as string;
      if (c === "'") {
        const end = line.indexOf("'", i + 1);
        if (end === -1) throw new Error("unclosed '");
        word += line.slice(i + 1, end);
        inWord = true;
        i = end + 1;
      } else if (c === '"') {
        inWord = true;
        i++;
        while (i < line.length && line[i] !== '"') {
          if (line[i] === "\\" && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string)) {
            word += line[i + 1];
            i += 2;
          } else if (line[i] === "$") {
            const [text, next] = dollar(i);
            word += text;
            i = next;
          } else {
            word += line[i++];
          }
        }
        if (i >= line.length) throw new Error('unclosed "');
        i++;
      } else if (c === "\\") {
        if (i + 1 < line.length) word += line[i + 1];
        inWord = true;
        i += 2;
      } else if (c === "$") {
        const [text, next] = dollar(i);
        word += text;
        inWord = true;
        i = next;
      } else if (c === "`") {
        const end = line.indexOf("`", i + 1);
        if (end === -1) throw new Error("unclosed `");
        if (expand) word += textOf(this.run(line.slice(i + 1, end), depth + 1).out, 1).replace(/\n+$/, "");
        inWord = true;
        i = end + 1;
      } else if (c === " " || c === "\t" || c === "\n" || c === "\r") {
        flush();
        i++;
      } else if (c === "#" && !inWord) {
        break;
      } else if (c === ";" || c === "|" || c === "&") {
        flush();
        const two = line.slice(i, i + 2);
        if (two === "&&" || two === "||") {
          tokens.push({ op: two, at: i });
          i += 2;
        } else if (c === "&" && line[i - 1] === ">") {
          word = "&";
          inWord = true;
          i++;
        } else {
          // A background job (`cmd &`) runs here in the foreground: nothing really runs anyway.
          tokens.push({ op: c === "&" ? ";" : c, at: i });
          i++;
        }
      } else if (c === ">" || c === "<") {
        const fd = /^\d$/.test(word) && inWord ? word : "";
        if (fd) {
          word = "";
          inWord = false;
        }
        flush();
        const op = line[i + 1] === ">" ? `${c}${c}` : c;
        tokens.push({ word: `\0${fd}${op}` });
        i += op.length;
      } else {
        word += c;
        inWord = true;
        i++;
      }
    }
    flush();
    return tokens;
  }
}

/** Takes redirections out of a command's words: the streams sent to a file or /dev/null are dropped. */
function redirections(words: string[]): { argv: string[]; drop: Set<1 | 2> } {
  const argv: string[] = [];
  const drop = new Set<1 | 2>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (!word.startsWith("\0")) {
      argv.push(word);
      continue;
    }
    const target = words[i + 1] ?? "";
    i++;
    if (word.endsWith("<") || target.startsWith("&")) continue;
    drop.add(word.startsWith("\x002") ? 2 : 1);
  }
  return { argv, drop };
}
