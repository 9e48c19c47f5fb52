/**
 * Stops a long-running program on SIGINT, SIGTERM or SIGHUP (its terminal closed), or when the
 * process that started it is gone, and exits 0 once it has stopped. Programs call this from
 * `main` only, so tests can start and stop servers in-process.
 */

/**
 * Set by a parent (`honeybee up` for its node agent, the node agent for its honeypots) that
 * gives the child a stdin pipe it never writes to. The kernel closes the parent's end however
 * the parent ends, SIGKILL included, so the child reads end-of-file at once. Polling
 * `process.ppid` was the alternative; it needs a timer, lags by its interval, and is wrong
 * under a subreaper or as a container's first process, where a dead parent's orphans are not
 * re-parented to pid 1.
 */
export const PARENT_PIPE_ENV = "HONEYBEE_EXIT_ON_STDIN_EOF";

/** Calls `gone` once the parent that set PARENT_PIPE_ENV has exited; does nothing otherwise. */
export function watchParent(gone: () => void, env: Record<string, string | undefined> = process.env): void {
  if (env[PARENT_PIPE_ENV] !== "1") return;
  void (async () => {
    try {
      for await (const _ of Bun.stdin.stream()) {
        // Nothing is ever written; the loop ends at end-of-file.
      }
    } catch {}
    gone();
  })();
}

export function stopOnSignals(stop: () => Promise<void>, name = "honeybee"): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop().then(
      () => process.exit(0),
      (e) => {
        console.error(`${name}: error while stopping after ${signal}: ${(e as Error).message}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => onSignal("SIGINT"));
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGHUP", () => onSignal("SIGHUP"));
  watchParent(() => onSignal("the exit of its parent process"));
}
