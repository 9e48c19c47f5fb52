/**
 * Runs one install step: an argv (never a shell), in the pot's folder, with the pot's
 * environment and a time limit. Output goes to the install log; on failure the result quotes
 * its last lines. The step runs in its own process group so that a timeout also kills what it
 * started (a package manager's workers).
 */
import { closeLog, drainTo, openLog, Tail } from "./output";

export type StepResult = { ok: true } | { ok: false; message: string };

export interface StepOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  logFile: string;
  /** Aborted when the node shuts down: the step is killed rather than left running alone. */
  signal?: AbortSignal;
}

export async function runStep(argv: string[], opts: StepOptions): Promise<StepResult> {
  const fd = openLog(opts.logFile);
  const tail = new Tail();
  const shown = argv.join(" ");
  try {
    let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
    try {
      proc = Bun.spawn({ cmd: argv, cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
    } catch (e) {
      return { ok: false, message: `cannot run ${shown}: ${(e as Error).message}` };
    }
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(proc.pid, "SIGKILL");
    }, opts.timeoutMs);
    const onAbort = () => killGroup(proc.pid, "SIGKILL");
    opts.signal?.addEventListener("abort", onAbort);
    const [code] = await Promise.all([proc.exited, drainTo(proc.stdout, fd, tail), drainTo(proc.stderr, fd, tail)]);
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", onAbort);
    if (opts.signal?.aborted) return { ok: false, message: `${shown} was stopped because the node is shutting down` };
    if (timedOut) return { ok: false, message: `${shown} did not finish within ${formatMs(opts.timeoutMs)} and was killed; last output: ${tail.lines(5) || "(none)"}` };
    if (code !== 0) return { ok: false, message: `${shown} exited with ${proc.signalCode ?? `code ${code}`}: ${tail.lines(5) || "(no output)"}` };
    return { ok: true };
  } finally {
    closeLog(fd);
  }
}

/** Signals a whole process group (the child was spawned detached, so its pid is the group id). */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {}
  }
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}
