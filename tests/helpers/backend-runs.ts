/**
 * The backend runs of tests/core/postgres.test.ts: every feature test that starts a Core,
 * again on PostgreSQL and on PostgreSQL + NATS JetStream, each in a child `bun test` (the
 * switch is per process). `npm test` starts them with the suite (tests/setup.ts) so that they
 * run beside it; a run of postgres.test.ts alone starts them itself.
 */
import { readFileSync } from "node:fs";
import { BUN, ROOT } from "./index";

/** The folders whose tests are the features' contract (REST, feed, CLI and console against a Core). */
export const FEATURE_FOLDERS = ["tests/core", "tests/sessions", "tests/artifacts", "tests/console", "tests/cli"];

/** Files of those folders that do not run on the other backends, and why. */
export const NOT_A_BACKEND_TEST: Record<string, string> = {
  "tests/core/postgres.test.ts": "it checks the runs",
  "tests/core/postgres-outage.test.ts": "runs its own private PostgreSQL, which it stops",
  "tests/core/damaged-db.test.ts": "about a damaged SQLite file",
};

export function backendSuite(): string[] {
  const files: string[] = [];
  for (const folder of FEATURE_FOLDERS) {
    for (const f of new Bun.Glob(`${folder}/*.test.ts`).scanSync({ cwd: ROOT })) {
      if (f in NOT_A_BACKEND_TEST || !readFileSync(`${ROOT}/${f}`, "utf8").includes("startTestCore(")) continue;
      files.push(f);
    }
  }
  return files.sort();
}

export type Backend = "postgres" | "cluster";

export interface Run {
  code: number;
  report: string;
  files: number;
}

const running = new Set<ReturnType<typeof Bun.spawn>>();

/** Runs the files in a child `bun test` with the backend switch set. */
export async function runOn(backend: Backend, files: string[]): Promise<Run> {
  const proc = Bun.spawn([BUN, "test", "--timeout", "120000", ...files], { cwd: ROOT, env: { ...process.env, HONEYBEE_TEST_DB: backend }, stdout: "pipe", stderr: "pipe" });
  running.add(proc);
  try {
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, report: out + err, files: files.length };
  } finally {
    running.delete(proc);
  }
}

type Runs = Record<Backend, Promise<Run>>;
const KEY = Symbol.for("honeybee.backendRuns");
const store = globalThis as { [KEY]?: Runs };

/**
 * Starts both runs, or returns those started already in this process. `oneAtATime` runs them
 * one after the other: beside the rest of the suite, two more test streams would crowd a
 * small machine's cores; alone, side by side is faster.
 */
export function backendRuns(oneAtATime = false): Runs {
  if (store[KEY]) return store[KEY];
  const suite = backendSuite();
  const postgres = runOn("postgres", suite);
  // Each test Core of the cluster run is alone in a cluster of its own name on the machine's
  // NATS: its events go through JetStream and its writer role (docs/scale-out.md).
  const cluster = oneAtATime ? postgres.then(() => runOn("cluster", suite)) : runOn("cluster", suite);
  store[KEY] = { postgres, cluster };
  // A suite that ends (or is stopped) before the runs do leaves no test processes behind.
  process.once("exit", () => {
    for (const p of running) p.kill();
  });
  return store[KEY];
}
