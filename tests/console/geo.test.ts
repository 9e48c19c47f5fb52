/**
 * Countries and networks as the console words them, on a Core with GeoIP (the shipped data).
 */
import { expect, test } from "bun:test";
import { stringify } from "../../src/protocol/json";
import { BIG_ID, EventStreamClient, getJson, registerNode, settled, startTestCore } from "../helpers";
import { launchBrowser } from "../helpers/console";

const line = (src_ip: string) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", pot_type: "cowrie", src_ip, username: "root", password: "x" });

test("an address the GeoIP data does not know says so, not that Core has no GeoIP", async () => {
  await using core = await startTestCore();
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([line("127.0.0.1")]);
    await c.ack(1);
  }
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/attackers/127.0.0.1`);
  await page.getByText("no location for this address (private or unknown)").waitFor();
  expect(await page.getByText("no GeoIP").count()).toBe(0);
}, 60_000);

test("countries and networks are shown with their names, not only codes and numbers", async () => {
  await using core = await startTestCore();
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([line("8.8.8.8"), line("8.8.8.8")]);
    await c.ack(2);
  }
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/attackers/8.8.8.8`);
  await page.getByText(/United States \(US\) · AS15169 Google/).waitFor();
  // Both lead to their events, which say what they filter by name (issue 34, 5).
  const geo = page.getByTestId("attacker-geo");
  await geo.getByRole("link", { name: "United States (US)" }).click();
  await page.waitForURL(`${core.api}/events?country=US`);
  await page.getByTestId("events").getByText("8.8.8.8").first().waitFor();
  await page.getByTestId("filter-summary").getByText(/country United States \(US\)/).waitFor();
  await page.goBack();
  await geo.getByRole("link", { name: /AS15169 Google/ }).click();
  await page.waitForURL(`${core.api}/events?asn=15169`);
  await page.getByTestId("filter-summary").getByText(/network AS15169 Google/).waitFor();
  expect(await page.getByTestId("events").locator("tbody tr").count()).toBe(2);
  await page.goto(`${core.api}/map`);
  await page.getByTestId("countries").getByText("United States (US)").waitFor();
  await page.getByTestId("asns").getByRole("link", { name: /AS15169 Google/ }).waitFor();
  await page.goto(`${core.api}/`);
  await page.locator("#top-geo").getByText("United States (US)").waitFor();
  await page.locator("#top-geo").getByText(/AS15169 Google/).waitFor();
}, 60_000);

test("the attack map: a placed sensor, an arc from a stored event's country to it, and a live event's arc", async () => {
  await using core = await startTestCore();
  using _node = await registerNode(core, BIG_ID, "sensor-1");
  const put = await getJson(`${core.api}/api/v1/nodes/${BIG_ID}/location`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ lat: 50.11, lon: 8.68, label: "Frankfurt" }) });
  expect(put.status).toBe(200);
  const at = (src_ip: string) => stringify({ eventid: "cowrie.login.failed", node_id: BIG_ID, pot_id: "ssh-1", pot_type: "cowrie", src_ip, username: "root", password: "x" });
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send([at("8.8.8.8"), at("8.8.8.8"), line("8.8.4.4")]);
  await c.ack(3);
  await settled(core);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/map`);
  const map = page.locator(".attack-map");
  await map.locator(`[data-testid="sensor"][data-node="${BIG_ID}"]`).getByText("Frankfurt", { exact: true }).waitFor();
  // The stored events of sensor-1 from 8.8.8.8 (US); 8.8.4.4's event names no node, so no arc of its own.
  await map.locator(`[data-testid="arc"][data-from="US"][data-to="${BIG_ID}"]`).waitFor();
  expect(await map.locator('[data-testid="arc"]').count()).toBe(1);
  await page.getByTestId("map-sensors").getByText("sensor-1 (Frankfurt)").waitFor();
  await page.getByTestId("countries").getByText("United States (US)").waitFor();

  // A new event comes in on the live feed: its arc is drawn, then fades away.
  const live = page.getByTestId("live-arcs");
  await page.locator('[data-testid="live-arcs"][data-feed="open"]').waitFor();
  expect(await live.getAttribute("data-last")).toBeNull();
  c.send([at("1.1.1.1")]);
  await c.ack(4);
  await settled(core);
  const country = (await getJson(`${core.api}/api/v1/events?src_ip=1.1.1.1`)).body.events[0].geo.country;
  await page.locator(`[data-testid="live-arcs"][data-last="${country}>${BIG_ID}"]`).waitFor();
  await page.locator('[data-testid="live-arcs"][data-live="0"]').waitFor({ timeout: 5000 });
}, 90_000);
