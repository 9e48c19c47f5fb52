import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestCore } from "../helpers";
import { requireTool } from "../helpers/clients";

/** The page as headless Chromium renders it (no network beyond loopback). */
async function renderedDom(url: string): Promise<string> {
  // Debian's chromium: `npm test` installs it when it is missing (scripts/test-deps.ts).
  const chromium = requireTool("chromium");
  const profile = mkdtempSync(join(tmpdir(), "honeybee-chromium-"));
  try {
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
        url,
      ],
      { stdout: "pipe", stderr: "ignore" },
    );
    const dom = await new Response(proc.stdout).text();
    await proc.exited;
    return dom;
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

test("Swagger UI renders offline in headless Chromium and shows the operations", async () => {
  await using core = await startTestCore();
  // Any CDN asset would fail to load and the UI would stay empty.
  const dom = await renderedDom(`${core.api}/swagger`);
  for (const path of ["/health", "/api/v1/nodes", "/api/v1/nodes/{node_id}", "/api/v1/honeypots"]) {
    expect(dom).toContain(`data-path="${path}"`);
  }
  expect(dom).toContain("HoneyBee Core");
});

test("Swagger UI offers every command as a ready JSON body for POST /api/v1/nodes/{node_id}/commands", async () => {
  await using core = await startTestCore();
  const dom = await renderedDom(`${core.api}/swagger#/Commands/postApiV1NodesByNode_idCommands`);
  const text = dom.replace(/<[^>]+>/g, " ").replace(/&quot;/g, '"').replace(/\s+/g, " ");
  const body = text.slice(text.indexOf("Request body"));
  expect(body).toStartWith("Request body application/json Examples:");
  for (const summary of ["Install a honeypot from the node's catalogue.", "The last lines of a honeypot's stdout, stderr and install logs.", "Change the node's live settings (null: only report them).", "Stop a honeypot, delete its files on the node"]) {
    expect(body).toContain(summary);
  }
  expect(body).toContain('Example Value Schema { "InstallPot" : { "pot_id" : "ssh-01" , "honeypot_type" : "cowrie"');
});
