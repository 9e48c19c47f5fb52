/**
 * A pot's controls follow its state, and a Failed pot says why on its own row. A node's Health
 * section shows the figures a real node agent's heartbeats carry, and per honeypot its metrics
 * and last log lines from the node (after a real crash and restart); a read token sees the
 * node's figures and a note instead of the commands.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import pkg from "../../package.json" with { type: "json" };
import { logFiles } from "../../src/node/supervisor";
import { BIG_ID, getJson, registerNode, until } from "../helpers";
import { httpAttack, launchBrowser, startSystem, type ConsoleSystem } from "../helpers/console";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const OPERATOR = "op-token-1";
const READER = "read-token-1";

let sys: ConsoleSystem;
let browser: Browser & AsyncDisposable;
beforeAll(async () => {
  sys = await startSystem({
    tokens: [
      { name: "olga", role: "operator", sha256: sha256(OPERATOR) },
      { name: "rita", role: "read", sha256: sha256(READER) },
    ],
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.[Symbol.asyncDispose]();
  await sys?.[Symbol.asyncDispose]();
});

const api = (path: string, body?: unknown) =>
  getJson(`${sys.core.api}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${OPERATOR}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function signedIn(token: string, path: string) {
  const page = await browser.newPage();
  await page.goto(`${sys.core.api}${path}`);
  await page.fill("#token", token);
  await page.getByRole("button", { name: "Sign in" }).click();
  return page;
}

test("Start is off for a Running pot, Stop for a Stopped or Failed one; a Failed pot shows its error", async () => {
  using node = await registerNode(sys.core);
  const report = (pot_id: string, status: string, message?: string) => node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id, pot_type: "cowrie", status, message });
  report("up", "Running");
  report("down", "Stopped");
  report("broken", "Failed", "install failed: pip exited with 1");
  const pots = async () => (await api(`/api/v1/nodes/${BIG_ID}`)).body.honeypots as { pot_id: string; message?: string }[];
  await until(async () => (await pots()).length === 3, "three pots");
  expect((await pots()).find((p) => p.pot_id === "broken")!.message).toBe("install failed: pip exited with 1");

  const page = await signedIn(OPERATOR, `/nodes/${BIG_ID}`);
  const enabled = async (pot: string) => {
    const row = page.locator(`[data-testid="pots"] tr[data-pot="${pot}"]`);
    await row.waitFor();
    return Object.fromEntries(await Promise.all((await row.getByRole("button").all()).map(async (b) => [await b.textContent(), await b.isEnabled()])));
  };
  expect(await enabled("up")).toEqual({ Start: false, Stop: true, Restart: true, Remove: true });
  expect(await enabled("down")).toEqual({ Start: true, Stop: false, Restart: true, Remove: true });
  expect(await enabled("broken")).toEqual({ Start: true, Stop: false, Restart: true, Remove: true });
  expect(await page.locator('[data-testid="pots"] tr[data-pot="broken"]').textContent()).toContain("install failed: pip exited with 1");
  // This connection sends plain heartbeats (as an older node does): no figures, and the page says so.
  node.send("NodeStatusUpdate", { node_id: BIG_ID, status: "Running" });
  await page.getByTestId("node-health").getByText("This node sends no figures with its heartbeats").waitFor();
  await page.close();
}, 60_000);

test("Health: a real node's version, uptime, memory and disk; a honeypot's restarts after a real crash and its last log lines; a read token sees the figures only", async () => {
  const { core, nodeId, ports } = sys;
  expect((await api(`/api/v1/nodes/${nodeId}/commands`, { InstallPot: { pot_id: "web-01", honeypot_type: "web", config: { http_port: String(ports.http), tls: "false", download: "false" }, auto_start: true } })).status).toBe(202);
  const webStatus = async () => (await api(`/api/v1/nodes/${nodeId}`)).body.honeypots.find((p: { pot_id: string }) => p.pot_id === "web-01")?.status;
  await until(async () => (await webStatus()) === "Running", "web-01 Running", 3000);
  expect(await httpAttack(ports.http, "admin", "hunter2")).toMatchObject({ code: 0 });

  const page = await signedIn(OPERATOR, `/nodes/${nodeId}`);
  const health = page.getByTestId("node-health");
  await health.getByTestId("agent-version").getByText(`v${pkg.version}`).waitFor();
  expect(await health.getByTestId("agent-uptime").textContent()).toMatch(/^\d+(\.\d)? s$|min|h/);
  expect(await health.getByTestId("memory").textContent()).toMatch(/^[\d.]+ [KMGT]iB used of [\d.]+ [KMGT]iB/);
  expect(await health.getByTestId("disk").textContent()).toMatch(/^[\d.]+ [KMGT]iB free of [\d.]+ [KMGT]iB$/);
  expect(await health.getByTestId("heartbeat").textContent()).toMatch(/just now|\d s ago/);
  const row = page.locator('[data-testid="pot-health"] tr[data-pot="web-01"]');
  await row.getByTestId("restarts").getByText("0", { exact: true }).waitFor();
  expect(await row.locator("td").nth(4).textContent()).toMatch(/[KMG]iB$/);

  // A real crash: the pot's process group is killed; the node restarts it, and the page follows.
  const { pid } = sys.node.supervisor.process("web-01");
  expect(pid).toBeGreaterThan(0);
  process.kill(-pid!, "SIGKILL");
  await until(() => sys.node.supervisor.process("web-01").restarts === 1 && sys.node.supervisor.status("web-01")?.status === "Running", "web-01 restarted", 1000);
  await row.getByTestId("restarts").getByText("1", { exact: true }).waitFor();
  expect(await row.locator(".badge").textContent()).toBe("Running");

  // The last log lines, asked from the node when opened: the same as the node's log files end with.
  await page.getByRole("button", { name: "Last log lines of web-01" }).click();
  const files = logFiles(join(sys.node.dataDir, "logs"), "web-01");
  const logs = page.getByTestId("pot-logs");
  await logs.locator("h3").first().waitFor();
  let shown = 0;
  for (const f of ["stdout", "stderr", "install"] as const) {
    const lines = readFileSync(files[f], { encoding: "utf8", flag: "a+" }).split("\n").filter(Boolean);
    if (lines.length === 0) continue;
    shown++;
    expect(await logs.locator(`pre[data-log="${f}"]`).textContent()).toContain(lines.at(-1)!.slice(0, 200));
  }
  expect(shown).toBeGreaterThan(0);
  await page.close();

  // A read token: the node's figures, and a note in place of the honeypots' commands.
  const reader = await signedIn(READER, `/nodes/${nodeId}`);
  await reader.getByTestId("node-health").getByTestId("agent-version").getByText(`v${pkg.version}`).waitFor();
  await reader.locator("#health").getByText("Your token has role read").waitFor();
  expect(await reader.getByTestId("pot-health").count()).toBe(0);
  expect((await getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { authorization: `Bearer ${READER}`, "content-type": "application/json" }, body: JSON.stringify({ GetPotMetrics: "web-01" }) })).status).toBe(403);
  await reader.close();
}, 90_000);
