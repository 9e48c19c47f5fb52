/**
 * bin/honeybee, the way Core is started (npm start, the Docker image), sets Bun's allocator
 * to keep freed memory (docs/benchmarks.md, "The allocator") unless the environment already
 * says otherwise. Read from the running Core's own environment: `exec` makes it the launcher's
 * process (/proc: Linux, where Core runs).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, tempDir } from "../helpers";
import { LiveProcess } from "./cli-helpers";

/** The MIMALLOC_PURGE_DELAY a running `bin/honeybee core` was started with. */
async function purgeDelayOfCore(env: Record<string, string | undefined>): Promise<string | null> {
  using dir = tempDir();
  const core = new LiveProcess(
    [join(ROOT, "bin/honeybee"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir.path, "core.db"), "--log-level", "info"],
    { env },
  );
  try {
    await core.waitFor('"core started"');
    const environ = readFileSync(`/proc/${core.proc.pid}/environ`, "utf8").split("\0");
    const entry = environ.find((e) => e.startsWith("MIMALLOC_PURGE_DELAY="));
    return entry === undefined ? null : entry.slice(entry.indexOf("=") + 1);
  } finally {
    expect(await core.stop("SIGTERM")).toBe(0);
  }
}

describe("bin/honeybee", () => {
  test("starts Core with freed memory kept (MIMALLOC_PURGE_DELAY=-1)", async () => {
    expect(await purgeDelayOfCore({ MIMALLOC_PURGE_DELAY: undefined })).toBe("-1");
  });

  test("an operator's own MIMALLOC_PURGE_DELAY wins", async () => {
    expect(await purgeDelayOfCore({ MIMALLOC_PURGE_DELAY: "0" })).toBe("0");
  });
});
