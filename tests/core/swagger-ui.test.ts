import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCore } from "../helpers";
import { requireTool } from "../helpers/clients";

// Debian's chromium: `npm test` installs it when it is missing (scripts/test-deps.ts).
test("Swagger UI renders offline in headless Chromium and shows the operations", async () => {
  const chromium = requireTool("chromium");
  await using core = await startTestCore();
  const profile = mkdtempSync(join(tmpdir(), "honeybee-chromium-"));
  try {
    // No network beyond loopback: any CDN asset would fail to load and the UI would stay empty.
    const proc = Bun.spawn(
      [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        `--user-data-dir=${profile}`,
        "--virtual-time-budget=10000",
        "--dump-dom",
        `${core.api}/swagger`,
      ],
      { stdout: "pipe", stderr: "ignore" },
    );
    const dom = await new Response(proc.stdout).text();
    await proc.exited;
    for (const path of ["/health", "/api/v1/nodes", "/api/v1/nodes/{node_id}", "/api/v1/honeypots"]) {
      expect(dom).toContain(`data-path="${path}"`);
    }
    expect(dom).toContain("HoneyBee Core");
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
});
