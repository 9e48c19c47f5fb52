/**
 * Stops a long-running program on SIGINT/SIGTERM and exits 0 once it has stopped. Programs
 * call this from `main` only, so tests can start and stop servers in-process.
 */
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
}
