/**
 * Countries and networks as the console words them, on a Core with GeoIP (the shipped data).
 */
import { expect, test } from "bun:test";
import { EventStreamClient, startTestCore } from "../helpers";
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
