/**
 * Core sets Bun's allocator to keep freed memory and the engine to size its heaps as on a
 * 2 GiB machine (src/runtime-env.ts, docs/benchmarks.md) unless the environment already says
 * otherwise, however it is started: bin/honeybee (npm start, the Docker image) or `bun
 * src/main.ts core` (a developer, a container's own command). Read from the running Core's
 * own environment (/proc: Linux, where Core runs).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, tempDir } from "../helpers";
import { LiveProcess } from "./cli-helpers";

const BIN = [join(ROOT, "bin/honeybee")];
const BARE = [BUN, join(ROOT, "src/main.ts")];

/** The values of `names` a running Core started by `launch` had in its environment (null: unset). */
async function environOfCore(launch: string[], env: Record<string, string | undefined>, names: string[]): Promise<(string | null)[]> {
  using dir = tempDir();
  const core = new LiveProcess([...launch, "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir.path, "core.db"), "--log-level", "info"], { env });
  try {
    await core.waitFor('"core started"');
    // Started again in place: the process that was spawned is Core.
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

const UNSET = { MIMALLOC_PURGE_DELAY: undefined, BUN_JSC_forceRAMSize: undefined };

describe("Bun's settings for Core", () => {
  test("bin/honeybee and bun src/main.ts core both start Core with freed memory kept (MIMALLOC_PURGE_DELAY=-1) and heaps sized for 2 GiB", async () => {
    expect(await environOfCore(BIN, UNSET, NAMES)).toEqual(["-1", "2147483648"]);
    expect(await environOfCore(BARE, UNSET, NAMES)).toEqual(["-1", "2147483648"]);
    expect(await environOfCore(BARE, { ...UNSET, MIMALLOC_PURGE_DELAY: "" }, NAMES)).toEqual(["-1", "2147483648"]);
  });

  test("the benches start Core with what it sets (LAUNCHER_ENV in bench/lib.ts)", async () => {
    // The benches start Core with Bun directly and write Core's values out again; both
    // read without the variables set, as a fresh shell has them.
    const bench = Bun.spawnSync([process.execPath, "-e", `const { LAUNCHER_ENV } = await import(${JSON.stringify(join(ROOT, "bench/lib.ts"))}); console.log(JSON.stringify(LAUNCHER_ENV))`], {
      env: { ...process.env, ...UNSET },
    });
    expect(bench.exitCode).toBe(0);
    const benchEnv = JSON.parse(bench.stdout.toString()) as Record<string, string>;
    expect(Object.keys(benchEnv).sort()).toEqual([...NAMES].sort());
    expect(await environOfCore(BARE, UNSET, NAMES)).toEqual(NAMES.map((name) => benchEnv[name]!));
  });

  test("an operator's own values win, and only the one not given is set", async () => {
    expect(await environOfCore(BIN, { MIMALLOC_PURGE_DELAY: "0", BUN_JSC_forceRAMSize: "8589934592" }, NAMES)).toEqual(["0", "8589934592"]);
    expect(await environOfCore(BARE, { MIMALLOC_PURGE_DELAY: "0", BUN_JSC_forceRAMSize: undefined }, NAMES)).toEqual(["0", "2147483648"]);
  });
});
