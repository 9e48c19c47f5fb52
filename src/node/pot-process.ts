/**
 * One run of one honeypot process.
 *
 * The process gets its own process group (`detached`): stopping signals the whole group, so a
 * honeypot that forks workers is stopped completely, and a Ctrl-C in the node's terminal
 * reaches the node alone, which then stops its pots in order instead of racing them.
 *
 * Started means: the ready line `{"ready":true,"ports":{...}}` on stdout, or, for a honeypot
 * that never prints one, still alive after the start timeout.
 */
import type { Logger } from "../log";
import { PARENT_PIPE_ENV } from "../signals";
import { closeLog, drainTo, openLog, rotateIfLarge, Tail } from "./output";
import { killGroup } from "./run-step";

export type StartOutcome = { how: "ready"; ports: Record<string, unknown> | null } | { how: "alive" } | { how: "exited" };

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  stderrTail: string;
}

export interface PotProcess {
  readonly pid: number;
  readonly started: Promise<StartOutcome>;
  readonly exited: Promise<ExitInfo>;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs: number): Promise<ExitInfo>;
}

export interface SpawnPotOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdoutLog: string;
  stderrLog: string;
  startTimeoutMs: number;
  logger: Logger;
}

const MAX_READY_SCAN_BYTES = 64 * 1024;

/** Starts the process; throws when it cannot be started at all (missing executable). */
export function spawnPot(opts: SpawnPotOptions): PotProcess {
  rotateIfLarge(opts.stdoutLog);
  rotateIfLarge(opts.stderrLog);
  const outFd = openLog(opts.stdoutLog);
  const errFd = openLog(opts.stderrLog);
  let proc: Bun.Subprocess<"pipe", "pipe", "pipe">;
  try {
    // stdin is a pipe the node never writes to: its end tells the honeypot that the node is gone,
    // even after a SIGKILL (src/signals.ts). Honeypots that ignore it are reaped by the node's next
    // start (orphans.ts).
    proc = Bun.spawn({ cmd: opts.argv, cwd: opts.cwd, env: { ...opts.env, [PARENT_PIPE_ENV]: "1" }, stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true });
  } catch (e) {
    closeLog(outFd);
    closeLog(errFd);
    throw e;
  }
  const tail = new Tail();
  const started = Promise.withResolvers<StartOutcome>();
  let scanned = "";
  const decoder = new TextDecoder();
  const watchReady = (chunk: Uint8Array): boolean => {
    scanned += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = scanned.indexOf("\n")) >= 0) {
      const line = scanned.slice(0, nl).trim();
      scanned = scanned.slice(nl + 1);
      const ready = readyLine(line);
      if (ready) {
        started.resolve({ how: "ready", ports: ready.ports });
        return false;
      }
    }
    // A honeypot that prints a lot without a ready line: stop scanning, the timeout decides.
    return scanned.length < MAX_READY_SCAN_BYTES;
  };
  const streams = Promise.all([drainTo(proc.stdout, outFd, null, watchReady), drainTo(proc.stderr, errFd, tail)]);
  const startTimer = setTimeout(() => started.resolve({ how: "alive" }), opts.startTimeoutMs);

  const exited = (async (): Promise<ExitInfo> => {
    const code = await proc.exited;
    clearTimeout(startTimer);
    try {
      void Promise.resolve(proc.stdin.end()).catch(() => {});
    } catch {}
    started.resolve({ how: "exited" });
    // Whatever the honeypot left behind in its group goes with it (it would hold its ports).
    killGroup(proc.pid, "SIGKILL");
    // Output of a grandchild that escaped the group could keep the pipes open forever.
    await Promise.race([streams, Bun.sleep(1000)]);
    closeLog(outFd);
    closeLog(errFd);
    return { code: proc.signalCode ? null : code, signal: proc.signalCode ? String(proc.signalCode) : null, stderrTail: tail.lines(8) };
  })();

  return {
    pid: proc.pid,
    started: started.promise,
    exited,
    async stop(graceMs) {
      killGroup(proc.pid, "SIGTERM");
      const timer = setTimeout(() => {
        opts.logger.warn({ pid: proc.pid, grace_ms: graceMs }, "honeypot ignored SIGTERM; sending SIGKILL");
        killGroup(proc.pid, "SIGKILL");
      }, graceMs);
      const info = await exited;
      clearTimeout(timer);
      return info;
    },
  };
}

function readyLine(line: string): { ports: Record<string, unknown> | null } | null {
  if (!line.startsWith("{") || !line.includes("ready")) return null;
  try {
    const v = JSON.parse(line);
    if (v?.ready !== true) return null;
    return { ports: typeof v.ports === "object" && v.ports !== null ? v.ports : null };
  } catch {
    return null;
  }
}
