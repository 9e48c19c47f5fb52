/**
 * What Bun reads from the environment when its process starts, for the commands that run for
 * long (Core, `up`, the node agent, the proxy), set however they are started: bin/honeybee,
 * `bun src/main.ts core` as a developer or a container's own command runs it, a service unit.
 * Both are read before any of our code runs, so a process without them starts again with them
 * (`process.execve`: same process id, same arguments and Bun flags). A value the environment
 * already has wins, empty counts as unset (as `${VAR:=default}` in a shell).
 *
 * - MIMALLOC_PURGE_DELAY=-1: Bun's allocator keeps freed memory instead of handing it back to
 *   the system within moments; under a steady stream of events Core asked for it again as
 *   soon, and every page handed back was a page fault later (in a virtual machine both ends
 *   are dear). Measured on Core taking 2M events after a warm-up (docs/benchmarks.md, "Warm
 *   servers and the allocator"): 10x fewer page faults and 23-41% less CPU per event; the cost
 *   is that Core keeps its peak memory. 0 hands memory back at once.
 * - BUN_JSC_forceRAMSize=2147483648: JavaScriptCore sizes its heaps from the host's memory,
 *   and on a large host lets garbage pile up to hundreds of MB before collecting, a peak the
 *   setting above then keeps. Core's live heaps are tens of MB; sized as on a 2 GiB machine
 *   (the small machine Core is built for) peak RSS under full load went from 499-591 MB to
 *   375-445 in the ingest bench, for 4-11% more CPU per event (docs/benchmarks.md, "The
 *   engine's heap sizing"); 512 MiB to 4 GiB measured alike.
 */
import { existsSync } from "node:fs";

export const RUNTIME_ENV = {
  MIMALLOC_PURGE_DELAY: "-1",
  BUN_JSC_forceRAMSize: "2147483648",
} as const;

/** The commands that run servers; the others are over in moments and keep Bun's defaults. */
const LONG_RUNNING = new Set(["core", "up", "node", "proxy"]);

/** The variables of RUNTIME_ENV that `env` lacks, with their values. */
export function missingRuntimeEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(RUNTIME_ENV).filter(([name]) => !env[name]));
}

/**
 * Starts this process again with RUNTIME_ENV's missing variables when `argv` runs a
 * long-running command; returns when there is nothing to do (or Bun cannot re-execute).
 */
export function execWithRuntimeEnv(argv: string[] = process.argv, env: Record<string, string | undefined> = process.env): void {
  const command = argv.slice(2).find((a) => !a.startsWith("-"));
  if (command === undefined || !LONG_RUNNING.has(command)) return;
  const missing = missingRuntimeEnv(env);
  // Node's process.execve (Bun has it; its types do not yet).
  const { execve } = process as { execve?: (file: string, args: string[], env: Record<string, string | undefined>) => never };
  if (Object.keys(missing).length === 0 || typeof execve !== "function") return;
  // A standalone executable has no script path to run again.
  if (argv[1] === undefined || !existsSync(argv[1])) return;
  execve.call(process, process.execPath, [process.execPath, ...process.execArgv, ...argv.slice(1)], { ...env, ...missing });
}
