/**
 * bin/honeybee, the way Core is started (npm start, the Docker image), sets Bun's allocator
 * to keep freed memory and the engine to size its heaps as on a 2 GiB machine
 * (docs/benchmarks.md) unless the environment already says otherwise. Read from the running
 * Core's own environment: `exec` makes it the launcher's process (/proc: Linux, where Core
 * runs).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../helpers";
import { LiveProcess } from "./cli-helpers";

/** The values of `names` a running `bin/honeybee core` was started with (null: unset). */
async function environOfCore(env: Record<string, string | undefined>, names: string[]): Promise<(string | null)[]> {
  using dir = tempDir();
  const core = new LiveProcess(
    [join(ROOT, "bin/honeybee"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir.path, "core.db"), "--log-level", "info"],
    { env },
  );
  try {
    await core.waitFor('"core started"');
    const environ = readFileSync(`/proc/${core.proc.pid}/environ`, "utf8").split("\0");
    return names.map((name) => {
      const entry = environ.find((e) => e.startsWith(`${name}=`));
      return entry === undefined ? null : entry.slice(name.length + 1);
    });
  } finally {
    expect(await core.stop("SIGTERM")).toBe(0);
  }
}

const NAMES = ["MIMALLOC_PURGE_DELAY", "BUN_JSC_forceRAMSize"];

describe("bin/honeybee", () => {
  test("starts Core with freed memory kept (MIMALLOC_PURGE_DELAY=-1) and heaps sized for 2 GiB", async () => {
    expect(await environOfCore({ MIMALLOC_PURGE_DELAY: undefined, BUN_JSC_forceRAMSize: undefined }, NAMES)).toEqual(["-1", "2147483648"]);
  });

  test("the benches start Core with what it sets (LAUNCHER_ENV in bench/lib.ts)", async () => {
    // The benches start Core with Bun directly and write the launcher's values out again; both
    // read without the variables set, as a fresh shell has them.
    const unset = { MIMALLOC_PURGE_DELAY: undefined, BUN_JSC_forceRAMSize: undefined };
    const bench = Bun.spawnSync([process.execPath, "-e", `const { LAUNCHER_ENV } = await import(${JSON.stringify(join(ROOT, "bench/lib.ts"))}); console.log(JSON.stringify(LAUNCHER_ENV))`], {
      env: { ...process.env, ...unset },
    });
    expect(bench.exitCode).toBe(0);
    const benchEnv = JSON.parse(bench.stdout.toString()) as Record<string, string>;
    expect(Object.keys(benchEnv).sort()).toEqual([...NAMES].sort());
    expect(await environOfCore(unset, NAMES)).toEqual(NAMES.map((name) => benchEnv[name]!));
  });

  test("an operator's own values win", async () => {
    expect(await environOfCore({ MIMALLOC_PURGE_DELAY: "0", BUN_JSC_forceRAMSize: "8589934592" }, NAMES)).toEqual(["0", "8589934592"]);
  });
});
