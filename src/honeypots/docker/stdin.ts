/**
 * The stdin of a hijacked attach or exec stream that a shell reads (`docker exec -i`,
 * `docker run -i`): typed lines are recorded as docker.command.input and answered through the
 * console. `docker run -i` sends its stdin before it starts the container, so what comes before
 * the start is held (bounded, like a pipe's buffer) and handed over once the process "runs".
 */
import type { PotSession } from "../shared/session.ts";
import { Console, type ConsoleInput } from "./console.ts";
import type { Container, DaemonState } from "./state.ts";

export type Output = (stream: 1 | 2, text: string) => void;

/** The canonical tty's line limit (N_TTY_BUF_SIZE - 1). */
const MAX_LINE = 4095;
/** A pipe's buffer holds about this much before its writer blocks. */
const HELD_STDIN = 64 * 1024;

export interface ShellOptions {
  container: Container;
  tty: boolean;
  /** Ids the command.input events carry (container_id, exec_id). */
  ids: Record<string, string>;
  /** Whether the answers go to the container's log (not an exec's). */
  logged: boolean;
  /** The shell exited: its stdin ended or it was told to exit. */
  exit: () => void;
}

export class ShellStdin {
  private readonly console: Console;
  private held: { chunks: Buffer[]; size: number; eof: boolean } | null = null;
  private exited = false;

  constructor(
    private readonly opts: ShellOptions,
    state: DaemonState,
    private readonly session: PotSession,
    private readonly out: Output,
  ) {
    const c = opts.container;
    const base = c.image.remote.split("/").pop();
    const prompt = base === "alpine" || base === "busybox" ? "/ # " : `root@${c.id.slice(0, 12)}:/# `;
    this.console = new Console({ tty: opts.tty, prompt, maxLine: MAX_LINE, run: (line) => state.typed(c, line, opts.logged) });
  }

  /** Holds what comes until start() (a container not started yet). */
  hold(): void {
    this.held = { chunks: [], size: 0, eof: false };
  }

  /** The process runs: its prompt, then whatever stdin it was sent already. */
  start(): void {
    const held = this.held;
    this.held = null;
    for (const p of this.console.open()) this.out(p.stream, p.text);
    if (!held) return;
    for (const data of held.chunks) this.input(data);
    if (held.eof) this.eof();
  }

  input(data: Buffer): void {
    if (this.exited || data.length === 0) return;
    if (this.held) {
      if (this.held.size + data.length <= HELD_STDIN) this.held.chunks.push(data);
      this.held.size += data.length;
      return;
    }
    this.handle(this.console.input(data));
  }

  /** The client closed its side: the shell reads EOF. */
  eof(): void {
    if (this.exited) return;
    if (this.held) {
      this.held.eof = true;
      return;
    }
    this.handle(this.console.eof());
  }

  private handle(result: ConsoleInput): void {
    for (const line of result.lines) this.session.emit("command.input", { input: line, ...this.opts.ids, source: "stdin" });
    for (const p of result.printed) this.out(p.stream, p.text);
    if (result.exit) {
      this.exited = true;
      this.opts.exit();
    }
  }
}
