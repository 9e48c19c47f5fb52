/**
 * Time ranges and dashboards in a real browser (Debian's chromium through playwright-core):
 * a real Core and node run the built-in cowrie and web honeypots, attacked by OpenSSH and curl;
 * older events (days back, which no real client can make now) come through the event socket.
 * The overview follows the range picked (the URL and the numbers change), a kind's and a
 * honeypot's dashboards show the tables their manifests ask for, the node page has its own,
 * and a value clicked leads to its events.
 */
import { expect, test } from "bun:test";
import { EventStreamClient, getJson, settled, until } from "../helpers";
import { launchBrowser, potsRunning, run, sshAttack, startSystem } from "../helpers/console";
import { requireTool } from "../helpers/clients";

const DAY = 86_400_000;
/** Three failed logins four days ago, from an address no real client of this test uses. */
const OLD = Array.from({ length: 3 }, (_, i) => ({
  eventid: "cowrie.login.failed",
  pot_id: "ssh-01",
  pot_type: "cowrie",
  src_ip: "203.0.113.50",
  username: "olduser",
  password: `old-${i}`,
  timestamp: new Date(Date.now() - 4 * DAY + i * 1000).toISOString(),
}));

/** A connection two days ago from an address the shipped GeoIP data places in the United States. */
const GEO = { eventid: "cowrie.session.connect", pot_id: "edge-ssh", pot_type: "cowrie", src_ip: "8.8.8.8", timestamp: new Date(Date.now() - 2 * DAY).toISOString() };

interface Entry {
  title: string;
  event_type: string;
  field: string;
}
const entryId = (e: Entry) => `entry-${e.event_type}-${e.field}`.replace(/[^A-Za-z0-9_-]/g, "-");

test("time ranges on the overview; kind, honeypot and node dashboards with their manifests' tables; a value leads to its events", async () => {
  await using sys = await startSystem();
  const { core, nodeId, ports } = sys;
  const command = async (c: object) => expect((await getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(c) })).status).toBe(202);
  await command({ InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet), hostname: "db-prod-2" }, auto_start: true } });
  await command({ InstallPot: { pot_id: "web-01", honeypot_type: "web", config: { http_port: String(ports.http), tls: "false", download: "false" }, auto_start: true } });
  await potsRunning(core, ["ssh-01", "web-01"]);

  // Real attacks: OpenSSH logs in and runs a command, and fails once; curl probes and posts a login.
  expect((await sshAttack(ports.ssh, "root", "123456", "uname -a")).code).toBe(0);
  expect((await sshAttack(ports.ssh, "admin", "not-the-password")).code).toBe(255);
  const curl = (...args: string[]) => run([requireTool("curl"), "-s", "-o", "/dev/null", "-w", "%{http_code}", "-A", "zgrab/0.x", ...args]);
  expect((await curl(`http://127.0.0.1:${ports.http}/.env`)).out).toBe("200");
  expect((await curl("-d", "username=webadmin&password=hunter2", `http://127.0.0.1:${ports.http}/index.php`)).out).toMatch(/^[23]\d\d$/);
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([...OLD, GEO].map((e) => JSON.stringify(e)));
    await c.ack(OLD.length + 1);
  }
  const events = async (q: string) => (await getJson(`${core.api}/api/v1/events?limit=1000&${q}`)).body.events as any[];
  await until(async () => (await events("pot_id=web-01&event_type=web.login.failed")).length > 0 && (await events("pot_id=ssh-01&event_type=cowrie.command.input")).length > 0, "the attacks' events", 3000);
  await settled(core);
  const recent = (await events("since=24h")).length;
  const all = (await events("")).length;
  expect(all).toBe(recent + OLD.length + 1);

  await using browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // The overview over the last 24 hours (the default), then over 7 days: the URL and the counts change.
  await page.goto(core.api + "/");
  const rangeEvents = page.getByTestId("range-events");
  await rangeEvents.getByText(String(recent), { exact: true }).waitFor();
  expect(await page.getByTestId("top-usernames").getByText("olduser").count()).toBe(0);
  await page.getByRole("button", { name: "last 7 days" }).click();
  await page.waitForURL(`${core.api}/?range=7d`);
  await rangeEvents.getByText(String(all), { exact: true }).waitFor();
  await page.getByTestId("top-usernames").getByText("olduser").waitFor();
  await page.locator("#chart-range h2", { hasText: "Events per 30 min, last 7 days" }).waitFor();
  // From/to: only the day the old events are in.
  await page.getByRole("button", { name: "from / to…" }).click();
  const local = (ms: number) => new Date(ms - new Date(ms).getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
  await page.fill("input[name=from]", local(Date.now() - 5 * DAY));
  await page.fill("input[name=to]", local(Date.now() - 3 * DAY));
  await page.getByRole("button", { name: "Show" }).click();
  await page.waitForURL(/\/\?from=[^&]+&to=[^&]+$/);
  await rangeEvents.getByText(String(OLD.length), { exact: true }).waitFor();
  // Its chart too: drawn, and nothing on the page says an API refused the range.
  await page.locator("#chart-range .uplot").waitFor();
  expect(await page.getByRole("alert").count()).toBe(0);
  expect(await page.getByTestId("top-ips").locator("tbody tr").allTextContents()).toEqual([`203.0.113.503`]);
  // A reload keeps the range: it is the URL.
  await page.reload();
  await rangeEvents.getByText(String(OLD.length), { exact: true }).waitFor();
  const fromTo = new URL(page.url()).search;
  // The map over its default 7 days has the connection from two days ago; over 24 hours it has none.
  await page.goto(core.api + "/map");
  await page.getByTestId("countries").getByRole("link", { name: "United States (US)" }).waitFor();
  await page.getByRole("button", { name: "last 24 hours" }).click();
  await page.waitForURL(`${core.api}/map?range=24h`);
  await page.getByTestId("countries").getByText("none yet").waitFor();
  await page.locator("#countries h2", { hasText: "Countries (24 h)" }).waitFor();
  await page.goBack();
  await page.waitForURL(`${core.api}/map`);
  await page.getByTestId("countries").getByRole("link", { name: "United States (US)" }).waitFor();
  await page.goto(core.api + "/" + fromTo);
  // The overview links to the honeypots' and kinds' dashboards, over the range it shows.
  await page.getByTestId("health").getByRole("link", { name: "ssh-01" }).waitFor();
  await page.getByTestId("health").getByRole("link", { name: "(web)" }).click();
  await page.waitForURL(`${core.api}/kinds/web${fromTo}`);
  await page.getByTestId("range-events").getByText("0", { exact: true }).waitFor();
  await page.goto(`${core.api}/kinds/web`);

  // The kind's dashboard: every web pot's events, with each table its manifest asks for.
  const kinds = (await getJson(`${core.api}/api/v1/catalogue`)).body.kinds as { name: string; dashboard: Entry[] }[];
  const webEntries = kinds.find((k) => k.name === "web")!.dashboard;
  const cowrieEntries = kinds.find((k) => k.name === "cowrie")!.dashboard;
  expect(webEntries.length).toBeGreaterThan(0);
  expect(cowrieEntries.length).toBeGreaterThan(0);
  await page.getByTestId("dash-usernames").getByRole("link", { name: "webadmin" }).waitFor();
  await page.getByTestId("dash-passwords").getByRole("link", { name: "hunter2" }).waitFor();
  expect(await page.getByTestId("dash-usernames").getByText("root").count()).toBe(0);
  const webEvents = (await events("pot_type=web&since=24h")).length;
  await page.getByTestId("range-events").getByText(String(webEvents), { exact: true }).waitFor();
  // Each manifest table holds the most frequent values of its field (or fields, as pairs) in
  // the stored events of its type (or types: `cowrie.login.*`), ties by value.
  const valuesOf = (data: any, field: string): string[] => {
    const one = (f: string) => [data?.[f]].flat().filter((v) => ["string", "number", "boolean"].includes(typeof v)).map(String);
    if (!field.includes(",")) return one(field);
    const parts = field.split(",").map((f) => one(f)[0]);
    return parts.every((p) => p !== undefined) ? [parts.join(" / ")] : [];
  };
  const expectEntries = async (entries: Entry[], pot: string) => {
    const stored = await events(`pot_id=${pot}&since=24h`);
    for (const e of entries) {
      const card = page.locator(`#${entryId(e)}`);
      await card.locator("h2", { hasText: e.title }).waitFor();
      const ofType = (t: string) => (e.event_type.endsWith(".*") ? t.startsWith(e.event_type.slice(0, -1)) : t === e.event_type);
      const counts = new Map<string, number>();
      for (const ev of stored.filter((x) => ofType(x.event_type))) for (const v of valuesOf(ev.data, e.field)) counts.set(v, (counts.get(v) ?? 0) + 1);
      const [best] = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      if (!best) {
        await card.getByText("none yet").waitFor();
        continue;
      }
      await card.locator("tbody tr").first().waitFor();
      expect([e.title, (await card.locator("tbody tr").first().locator("td").allTextContents()).map((t) => t.trim())]).toEqual([e.title, [best[0], String(best[1])]]);
    }
  };
  await expectEntries(webEntries, "web-01");
  // The picked range carries over to its pots' pages.
  await page.getByRole("button", { name: "last 30 days" }).click();
  await page.waitForURL(`${core.api}/kinds/web?range=30d`);
  await page.getByTestId("kind-pots").getByRole("link", { name: "web-01" }).click();
  await page.waitForURL(`${core.api}/pots/web-01?node_id=${nodeId}&range=30d`);
  await page.getByRole("button", { name: "last 30 days", pressed: true }).waitFor();

  // A honeypot's dashboard: cowrie's, with the old events in 7 days and not in 24 hours.
  await page.goto(`${core.api}/pots/ssh-01`);
  await page.getByTestId("pot-facts").getByRole("link", { name: "cowrie" }).waitFor();
  await page.getByTestId("dash-usernames").getByRole("link", { name: "root" }).waitFor();
  await page.locator("#entry-cowrie-command-input-input").getByRole("link", { name: "uname -a" }).waitFor();
  await page.getByTestId("dash-sources").getByRole("link", { name: "127.0.0.1" }).waitFor();
  expect(await page.getByTestId("dash-usernames").getByText("olduser").count()).toBe(0);
  await expectEntries(cowrieEntries, "ssh-01");
  const sshRecent = (await events("pot_id=ssh-01&since=24h")).length;
  await page.getByTestId("range-events").getByText(String(sshRecent), { exact: true }).waitFor();
  await page.getByRole("button", { name: "last 7 days" }).click();
  await page.waitForURL(`${core.api}/pots/ssh-01?range=7d`);
  await page.getByTestId("range-events").getByText(String(sshRecent + OLD.length), { exact: true }).waitFor();
  await page.getByTestId("dash-usernames").getByRole("link", { name: "olduser" }).waitFor();
  await page.locator("#dash-chart .uplot").waitFor();
  expect(await page.getByRole("alert").count()).toBe(0);

  // Drill-down: an event type of this honeypot, over this range, to its events.
  await page.getByTestId("dash-types").getByRole("link", { name: "cowrie.login.failed" }).click();
  await page.waitForURL((u) => u.pathname === "/events" && u.searchParams.get("pot_id") === "ssh-01" && u.searchParams.get("event_type") === "cowrie.login.failed" && u.searchParams.get("since") === "7d");
  const table = page.getByTestId("events");
  await table.getByText("olduser / old-0").waitFor();
  await table.getByText("admin / not-the-password").waitFor();
  const failed = await events("pot_id=ssh-01&event_type=cowrie.login.failed&since=7d");
  expect(await table.locator("tbody > tr").count()).toBe(failed.length);
  // A credential pair of the manifest's table leads to the events that tried both.
  await page.goBack();
  await page.locator("#entry-cowrie-login---username-password").getByRole("link", { name: "admin / not-the-password" }).click();
  await page.waitForURL((u) => u.pathname === "/events" && u.searchParams.get("username") === "admin" && u.searchParams.get("password") === "not-the-password" && u.searchParams.get("pot_id") === "ssh-01");
  await table.getByText("admin / not-the-password").waitFor();
  expect(await table.locator("tbody > tr").count()).toBe(1);
  // A source address leads to its attacker page.
  await page.goBack();
  await page.getByTestId("dash-sources").getByRole("link", { name: "203.0.113.50" }).click();
  await page.waitForURL(`${core.api}/attackers/203.0.113.50`);

  // The node's page keeps its honeypots and commands and gains its dashboard, both kinds' tables in it.
  await page.goto(`${core.api}/nodes/${nodeId}`);
  await page.getByTestId("pots").locator('tr[data-pot="ssh-01"] .badge', { hasText: "Running" }).waitFor();
  const dash = page.locator("#node-dashboard");
  await dash.getByTestId("dash-usernames").getByRole("link", { name: "webadmin" }).waitFor();
  await dash.getByTestId("dash-usernames").getByRole("link", { name: "root" }).waitFor();
  for (const e of [...webEntries, ...cowrieEntries]) await dash.locator(`#${entryId(e)} h2`, { hasText: e.title }).waitFor();
  // Over 7 days: the node's events as the events API counts them, the usernames they tried.
  await page.getByRole("button", { name: "last 7 days" }).click();
  await page.waitForURL(`${core.api}/nodes/${nodeId}?range=7d`);
  const nodeEvents = await events(`node_id=${nodeId}&since=7d`);
  await dash.getByTestId("range-events").getByText(String(nodeEvents.length), { exact: true }).waitFor();
  const nodeUsers = [...new Set(nodeEvents.map((e) => e.data?.username).filter((u) => typeof u === "string"))].sort();
  await until(async () => JSON.stringify((await dash.getByTestId("dash-usernames").getByRole("link").allTextContents()).sort()) === JSON.stringify(nodeUsers), "the node's usernames over 7 days", 1000);
  // /nodes links each honeypot's dashboard and each kind's.
  await page.goto(`${core.api}/nodes`);
  await page.getByTestId("kind-dashboards").getByRole("link", { name: "cowrie" }).click();
  await page.waitForURL(`${core.api}/kinds/cowrie`);
  await page.locator("#entry-cowrie-command-input-input").getByRole("link", { name: "uname -a" }).waitFor();
  await page.goto(`${core.api}/nodes`);
  await page.getByTestId("nodes").locator(".pot", { hasText: "ssh-01" }).getByRole("link", { name: "dashboard" }).click();
  await page.waitForURL(`${core.api}/pots/ssh-01?node_id=${nodeId}`);
  await page.goto(`${core.api}/nodes/${nodeId}?range=7d`);
  // Its pot rows lead to their dashboards.
  await page.getByTestId("pots").locator('tr[data-pot="web-01"]').getByRole("link", { name: "web-01" }).click();
  await page.waitForURL(`${core.api}/pots/web-01?node_id=${nodeId}&range=7d`);
  await page.getByTestId("dash-usernames").getByRole("link", { name: "webadmin" }).waitFor();

  // The sessions page takes the same presets as its since filter.
  await page.goto(`${core.api}/sessions`);
  await page.getByRole("button", { name: "last 15m" }).click();
  await page.waitForURL(`${core.api}/sessions?since=15m`);
  const sessions = (await getJson(`${core.api}/api/v1/sessions?since=15m`)).body.sessions as unknown[];
  expect(sessions.length).toBeGreaterThan(0);
  await until(async () => (await page.getByTestId("sessions").locator("tbody tr").count()) === sessions.length, "the last 15 minutes' sessions", 1000);
  await page.getByRole("button", { name: "last 15m", pressed: true }).waitFor();

  expect(errors).toEqual([]);
}, 90_000);
