/**
 * The fake shell: pure, no I/O. A transport hands it one line at a time and gets back the text to
 * show, the exit status, whether the session should end, and the effects worth an event (unknown
 * commands, download attempts). Nothing an attacker types ever runs on the real machine.
 */
import { findCommand } from "./commands/index.ts";
import { FakeFs } from "./fakefs.ts";
import { account } from "./host.ts";
import { expandWord, isAssignment, parseLine, type Expander, type Redirect, type SimpleCommand } from "./parse.ts";

export type ShellEffect =
  | { kind: "command.failed"; input: string }
  /** A download command's fetch; `result` is absent when the session fetches nothing (old behaviour). */
  | { kind: "file_download"; url: string; result?: FetchResult; destfile?: string };

/** What a download command asks the session to fetch (the shell itself does no I/O). */
export interface FetchRequest {
  url: string;
  /** The tool, for its User-Agent and the protocol it speaks. */
  tool: "wget" | "curl" | "tftp" | "ftpget";
}

/** The outcome of a fetch, as the download commands print it. */
export type FetchResult =
  | {
      ok: true;
      /** HTTP status and reason (200 OK for tftp and ftp). */
      status: number;
      statusText: string;
      contentType: string | null;
      /** Length the server announced, if it did. */
      length: number | null;
      size: number;
      sha256: string;
      /** Where the honeypot keeps the bytes until the node has sent them to Core. */
      outfile: string;
      /** Stopped at the size limit: the file holds the first `size` bytes only. */
      truncated: boolean;
      /** The first bytes as text (what `cat` of the saved file shows). */
      text: string;
      address: string;
      ms: number;
    }
  | { ok: false; error: "resolve" | "refused" | "timeout" | "http" | "blocked" | "disabled" | "full"; status?: number; statusText?: string; address?: string; message: string };

export interface ShellResult {
  /** stdout and stderr interleaved as a terminal shows them. */
  output: string;
  stdout: string;
  stderr: string;
  status: number;
  exit: boolean;
  effects: ShellEffect[];
  /** Fetches the line needs before it can run: the session fetches them and runs the line again. */
  pending: FetchRequest[];
}

export interface ShellOptions {
  hostname: string;
  username: string;
  /** A login shell at a prompt (errors read "-bash: ...") rather than `bash -c` for an exec request. */
  interactive: boolean;
  /** Output goes to a terminal, so `ls` lays names out in columns. */
  tty: boolean;
  now?: () => Date;
  /** Where the attacker connects from, as `w` and `who` show it. */
  remoteIp?: string;
  /**
   * The session fetches what download commands ask for (docs/artifacts.md). Without it a
   * download is only recorded and fails as on a box whose outbound traffic is blocked.
   */
  downloads?: boolean;
}

export interface CommandIo {
  stdin: string;
  /** stdout is the terminal itself, not a pipe or a file. */
  toTerminal: boolean;
}

export interface CommandResult {
  stdout?: string;
  stderr?: string;
  status?: number;
}

export type Command = (shell: Shell, args: string[], io: CommandIo) => CommandResult;

/** Bounds nested `sh -c` and `$(...)`, so `sh -c 'sh -c ...'` cannot recurse without end. */
const MAX_DEPTH = 8;
/**
 * Characters one command line may produce: a bot's reconnaissance prints a few KiB, while
 * `cat /proc/cpuinfo;` repeated over a 32 KiB exec request would otherwise print megabytes
 * into a client that may never read them.
 */
export const MAX_OUTPUT = 256 * 1024;
const BIN_DIRS = new Set(["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]);

/** A redirection whose target word has been expanded. */
type Expanded = Omit<Redirect, "target"> & { target: string };

/** Output in the order it was written, each piece tagged with its stream. */
type Chunk = [1 | 2, string];

const joined = (chunks: Chunk[], fd?: 1 | 2) => chunks.filter(([f]) => fd === undefined || f === fd).map(([, text]) => text).join("");

type Destination = { to: "stdout" | "stderr" | "null" } | { to: "file"; path: string; append: boolean };

export class Shell {
  readonly hostname: string;
  readonly username: string;
  readonly uid: number;
  readonly home: string;
  readonly interactive: boolean;
  readonly tty: boolean;
  readonly fs: FakeFs;
  readonly env = new Map<string, string>();
  readonly now: () => Date;
  readonly remoteIp: string;
  readonly startedAt: Date;
  readonly pid = 2000 + Math.floor(Math.random() * 30000);
  cwd: string;
  status = 0;
  exited = false;
  readonly history: string[] = [];
  private effects: ShellEffect[] = [];
  private pending: FetchRequest[] = [];
  /** Results of fetches by tool and URL, filled by the session between runs of a line. */
  private readonly fetched = new Map<string, FetchResult>();
  private depth: number;

  /** `parent` makes a child bash: same machine and files, its own cwd, variables and exit. */
  constructor(
    private readonly opts: ShellOptions,
    private readonly parent?: Shell,
  ) {
    this.hostname = opts.hostname;
    this.username = opts.username;
    const { uid, home } = account(opts.username);
    this.uid = uid;
    this.home = home;
    this.cwd = parent?.cwd ?? home;
    this.interactive = opts.interactive;
    this.tty = opts.tty;
    this.now = opts.now ?? (() => new Date());
    this.remoteIp = opts.remoteIp ?? "10.0.2.2";
    this.startedAt = this.now();
    this.fs = parent?.fs ?? new FakeFs(opts.hostname, opts.username, home);
    this.depth = parent ? parent.depth + 1 : 0;
    const login = {
      HOME: home,
      USER: opts.username,
      LOGNAME: opts.username,
      SHELL: "/bin/bash",
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      LANG: "C.UTF-8",
    };
    for (const [k, v] of parent ? parent.env : Object.entries(login)) this.env.set(k, v);
  }

  prompt(): string {
    const where = this.cwd === this.home ? "~" : this.cwd.startsWith(`${this.home}/`) ? `~${this.cwd.slice(this.home.length)}` : this.cwd;
    return `${this.username}@${this.hostname}:${where}${this.uid === 0 ? "#" : "$"} `;
  }

  /** bash names itself differently at a prompt and under `bash -c`. */
  get errorPrefix(): string {
    return this.interactive ? "-bash: " : "bash: line 1: ";
  }

  run(line: string): ShellResult {
    this.effects = [];
    this.pending = [];
    if (line.trim()) this.history.push(line);
    const chunks = this.chunks(line, this.tty);
    return { output: joined(chunks), stdout: joined(chunks, 1), stderr: joined(chunks, 2), status: this.status, exit: this.exited, effects: this.effects, pending: this.pending };
  }

  /**
   * A download command's fetch: the result once the session has fetched it, else null (the
   * request is noted, and the session runs the line again from a snapshot once it has it).
   */
  fetch(request: FetchRequest): FetchResult | null {
    if (this.parent) return this.parent.fetch(request);
    if (!this.opts.downloads) return { ok: false, error: "disabled", message: "downloads are not fetched" };
    const done = this.fetched.get(`${request.tool} ${request.url}`);
    if (done) return done;
    this.pending.push(request);
    return null;
  }

  /** Gives a fetch's result to the next run of the line. */
  fetchedResult(request: FetchRequest, result: FetchResult): void {
    this.fetched.set(`${request.tool} ${request.url}`, result);
  }

  /** Forgets fetch results once their line has run: the next `wget` of a URL fetches again. */
  clearFetched(): void {
    this.fetched.clear();
  }

  /** A function that puts the shell back as it was before a line (files, cwd, variables, status). */
  snapshot(): () => void {
    const fs = this.fs.snapshot();
    const { cwd, status, exited } = this;
    const env = new Map(this.env);
    const history = this.history.length;
    return () => {
      fs();
      this.cwd = cwd;
      this.status = status;
      this.exited = exited;
      this.env.clear();
      for (const [k, v] of env) this.env.set(k, v);
      this.history.length = history;
    };
  }

  /** Records something the session turns into an event, also from inside `sh -c` or `$(...)`. */
  effect(effect: ShellEffect): void {
    if (this.parent) this.parent.effect(effect);
    else this.effects.push(effect);
  }

  /** A child bash, as `sh -c`, `bash script`, `| sh` and `$(...)` start. */
  child(): Shell {
    return new Shell({ ...this.opts, interactive: false }, this);
  }

  /** Runs a command line in this shell's state, for `sh -c`, `bash script` and `echo cmd | sh`. */
  execute(line: string, toTerminal: boolean): CommandResult {
    const chunks = this.chunks(line, toTerminal);
    return { stdout: joined(chunks, 1), stderr: joined(chunks, 2), status: this.status };
  }

  private chunks(line: string, toTerminal: boolean): Chunk[] {
    if (this.depth >= MAX_DEPTH) return [];
    this.depth++;
    try {
      const parsed = parseLine(line);
      if (!parsed.ok) {
        this.status = 2;
        return [[2, `${this.errorPrefix}syntax error near unexpected token \`${parsed.token}'\n`]];
      }
      const out: Chunk[] = [];
      let size = 0;
      for (const item of parsed.list) {
        if (this.exited || size > MAX_OUTPUT) break;
        if (item.connector === "&&" && this.status !== 0) continue;
        if (item.connector === "||" && this.status === 0) continue;
        for (const chunk of this.pipeline(item.pipeline, toTerminal)) {
          out.push(chunk);
          size += chunk[1].length;
        }
      }
      return out;
    } finally {
      this.depth--;
    }
  }

  resolve(path: string): string {
    return this.fs.resolve(this.cwd, path, this.home);
  }

  private variable(name: string): string {
    if (name === "?") return String(this.status);
    if (name === "$") return String(this.pid);
    if (name === "0") return this.interactive ? "-bash" : "bash";
    if (name === "#") return "0";
    if (name === "PWD") return this.cwd;
    return this.env.get(name) ?? "";
  }

  private readonly expander: Expander = {
    variable: (name) => this.variable(name),
    // $(...) output is captured; bash shows its errors on the terminal, here they are dropped.
    substitute: (command) => joined(this.child().chunks(command, false), 1),
  };

  private pipeline(commands: SimpleCommand[], toTerminal: boolean): Chunk[] {
    let piped = "";
    const shown: Chunk[] = [];
    commands.forEach((command, i) => {
      const last = i === commands.length - 1;
      const argv = command.words.flatMap((word) => expandWord(word, this.expander, !isAssignment(word)));
      const redirects = command.redirects.map((r) => ({ ...r, target: expandWord(r.target, this.expander, false).join("") }));
      const [fd1, fd2] = destinations(redirects);
      const input = this.input(redirects, piped);
      if (input.error !== undefined) {
        shown.push([2, input.error]);
        this.status = 1;
        piped = "";
        return;
      }
      const result = this.invoke(argv, { stdin: input.text, toTerminal: toTerminal && last && fd1.to === "stdout" });
      this.status = result.status ?? 0;
      let stdout = "";
      let stderr = "";
      for (const [text, dest] of [
        [result.stderr ?? "", fd2],
        [result.stdout ?? "", fd1],
      ] as const) {
        if (dest.to === "stdout") stdout += text;
        else if (dest.to === "stderr") stderr += text;
        else if (dest.to === "file") stderr += this.writeFile(dest.path, text, dest.append);
      }
      if (stderr) shown.push([2, stderr]);
      if (last && stdout) shown.push([1, stdout]);
      piped = stdout;
    });
    return shown;
  }

  private input(redirects: Expanded[], piped: string): { text: string; error?: string } {
    const from = redirects.filter((r) => r.fd === 0).at(-1);
    if (!from) return { text: piped };
    const text = this.fs.read(this.resolve(from.target));
    return text === null ? { text: "", error: `${this.errorPrefix}${from.target}: No such file or directory\n` } : { text };
  }

  private writeFile(target: string, text: string, append: boolean): string {
    const error = this.fs.write(this.resolve(target), text, append);
    return error ? `${this.errorPrefix}${target}: ${error}\n` : "";
  }

  /** Runs one simple command; also how `sudo`, `nohup` and `busybox APPLET` run theirs. */
  invoke(argv: string[], io: CommandIo): CommandResult {
    const words = [...argv];
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) {
      const assignment = words.shift() as string;
      const eq = assignment.indexOf("=");
      this.env.set(assignment.slice(0, eq), assignment.slice(eq + 1));
    }
    const [name, ...args] = words;
    if (name === undefined) return { status: 0 };
    let builtin = findCommand(name);
    if (name.includes("/")) {
      const path = this.resolve(name);
      const base = path.slice(path.lastIndexOf("/") + 1);
      builtin = BIN_DIRS.has(path.slice(0, path.lastIndexOf("/"))) ? findCommand(base) : undefined;
      if (!builtin) {
        const kind = this.fs.kind(path);
        if (kind === "dir") return { stderr: `${this.errorPrefix}${name}: Is a directory\n`, status: 126 };
        if (kind === "file") return { stderr: `${this.errorPrefix}${name}: Permission denied\n`, status: 126 };
        return { stderr: `${this.errorPrefix}${name}: No such file or directory\n`, status: 127 };
      }
    }
    if (!builtin) {
      this.effect({ kind: "command.failed", input: words.join(" ") });
      return { stderr: `${this.errorPrefix}${name}: command not found\n`, status: 127 };
    }
    return builtin(this, args, io);
  }
}

function destinations(redirects: Expanded[]): [Destination, Destination] {
  const fds: Record<1 | 2, Destination> = { 1: { to: "stdout" }, 2: { to: "stderr" } };
  for (const r of redirects) {
    if (r.fd === 0) continue;
    if (r.op === ">&") fds[r.fd] = r.target === "1" ? { ...fds[1] } : r.target === "2" ? { ...fds[2] } : fds[r.fd];
    else if (r.target === "/dev/null") fds[r.fd] = { to: "null" };
    else fds[r.fd] = { to: "file", path: r.target, append: r.op === ">>" };
  }
  return [fds[1], fds[2]];
}
