/**
 * A session's page when Core checks tokens: the recording is fetched with the signed-in
 * token (a plain URL could not carry it) and played by asciinema-player.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EventStreamClient, getJson, settled, startTestCore, until } from "../helpers";
import { launchBrowser, sshShell, startSystem } from "../helpers/console";
import { sha256 } from "../../src/core/auth";

test("with tokens, a read token plays a session's recording", async () => {
  await using sys = await startSystem({ tokens: [{ name: "rita", role: "read", sha256: sha256("read-token-1") }, { name: "alice", role: "operator", sha256: sha256("op-token-1") }] });
  const { core, nodeId, ports } = sys;
  const auth = { authorization: "Bearer op-token-1", "content-type": "application/json" };
  const install = { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet), hostname: "db-prod-2" }, auto_start: true } };
  expect((await getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: auth, body: JSON.stringify(install) })).status).toBe(202);
  await until(async () => (await getJson(`${core.api}/api/v1/honeypots`, { headers: auth })).body.honeypots?.some((p: any) => p.pot_id === "ssh-01" && p.status === "Running"), "cowrie Running");
  expect((await sshShell(ports.ssh, "root", "123456", ["echo token-carried"])).code).toBe(0);
  const id = await until(async () => {
    const s = (await getJson(`${core.api}/api/v1/sessions?login_success=true`, { headers: auth })).body.sessions as any[];
    return s.length === 1 && (await getJson(`${core.api}/api/v1/sessions/${s[0].id}`, { headers: auth })).body.recording_file?.received ? s[0].id : null;
  }, "the recording on Core");
  // Without a token the recording is refused: the page can only have it through the token.
  expect((await getJson(`${core.api}/api/v1/sessions/${id}/recording`)).status).toBe(401);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/sessions/${id}`);
  await page.fill("#token", "read-token-1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("commands").getByText("echo token-carried").waitFor();
  const player = page.getByTestId("player").locator(".ap-player");
  await player.click();
  await page.getByTestId("player").locator(".ap-term", { hasText: "root@db-prod-2:~# echo token-carried" }).waitFor();
}, 60_000);

test("a recorded session whose events came to Core with no node says no path for its recording exists", async () => {
  await using core = await startTestCore();
  const lines = readFileSync(join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl"), "utf8").trim().split("\n");
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send(lines);
    await c.ack(lines.length);
  }
  await settled(core);
  const [recorded] = (await getJson(`${core.api}/api/v1/sessions?session=4f1da0ba5dbe`)).body.sessions;
  expect(recorded).toMatchObject({ recording: true, node_id: null });
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/sessions/${recorded.id}`);
  expect(await page.getByTestId("no-recording").textContent()).toContain("no path for the recording to reach Core");
}, 60_000);

test("a session's page opens from the honeypot's session hash as well as from Core's id", async () => {
  await using core = await startTestCore();
  const lines = readFileSync(join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl"), "utf8").trim().split("\n");
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send(lines);
    await c.ack(lines.length);
  }
  await settled(core);
  const [recorded] = (await getJson(`${core.api}/api/v1/sessions?session=4f1da0ba5dbe`)).body.sessions;
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/sessions/4f1da0ba5dbe`);
  await page.getByTestId("session-facts").waitFor();
  expect(await page.getByTestId("no-recording").textContent()).toContain("no path for the recording to reach Core");
  await page.goto(`${core.api}/sessions/${recorded.id}`);
  await page.getByTestId("session-facts").waitFor();
  await page.goto(`${core.api}/sessions/000000000000`);
  // The page fetches before it answers: wait for the note rather than count at once.
  await page.getByText("Core has no session 000000000000").waitFor();
}, 60_000);
