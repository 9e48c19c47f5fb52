/**
 * An attacker's downloads say which failed and why; event types and addresses are shown whole
 * where a 1280 px wide page has room for them (an attacker's page, /events, a session's page, /live).
 */
import { expect, test } from "bun:test";
import { EventStreamClient, startTestCore } from "../helpers";
import { launchBrowser } from "../helpers/console";

const IP = "185.220.101.234";
const base = { pot_id: "ssh-1", pot_type: "cowrie", src_ip: IP, session: "a1b2c3d4e5f6" };
const LINES = [
  { eventid: "cowrie.session.file_download", url: "http://198.51.100.9/ok.sh", shasum: "ab".repeat(32) },
  { eventid: "cowrie.session.file_download.failed", url: "http://198.51.100.9/gone.sh", reason: "connection refused" },
  { eventid: "cowrie.session.file_upload", url: "/tmp/up.bin", filename: "up.bin", shasum: "cd".repeat(32) },
  { eventid: "cowrie.session.file_upload.failed", url: "/tmp/big.bin", filename: "big.bin", reason: "too large" },
  { eventid: "cowrie.session.file_download", url: `http://198.51.100.9/${"x".repeat(400)}` },
].map((e) => JSON.stringify({ ...base, ...e }));

async function ingest() {
  const core = await startTestCore();
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(LINES);
  await c.ack(LINES.length);
  return core;
}

test("an attacker's failed downloads and uploads are marked failed, with the reason", async () => {
  await using core = await ingest();
  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/attackers/${IP}`);
  const items = page.locator("#downloads li");
  await items.filter({ hasText: "gone.sh" }).waitFor();
  // Each item: the URL or file, and for a failed one its badge and reason (a stored file may also have a link to its artifact).
  const rows = await items.evaluateAll((lis) =>
    lis.map((li) => ({ text: li.querySelector("bdi")?.textContent, failed: li.querySelector(".badge.bad")?.textContent ?? null, reason: li.querySelector(".muted")?.textContent ?? null })),
  );
  expect(rows.sort((a, b) => a.text!.localeCompare(b.text!))).toEqual([
    { text: "/tmp/big.bin", failed: "failed", reason: ": too large" },
    { text: "/tmp/up.bin", failed: null, reason: null },
    { text: "http://198.51.100.9/gone.sh", failed: "failed", reason: ": connection refused" },
    { text: "http://198.51.100.9/ok.sh", failed: null, reason: null },
    { text: `http://198.51.100.9/${"x".repeat(400)}`, failed: null, reason: null },
  ]);
}, 60_000);

test("event types and addresses are not cut on the attacker page, the events page, a session's page and /live at 1280 px", async () => {
  await using core = await ingest();
  await using browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const cut = (testId: string, column: number) =>
    page
      .getByTestId(testId)
      .locator(`tbody tr td:nth-child(${column})`)
      .evaluateAll((tds) => tds.filter((td) => td.scrollWidth > td.clientWidth).map((td) => td.textContent));

  await page.goto(`${core.api}/attackers/${IP}`);
  await page.getByTestId("attacker-events").getByText("cowrie.session.file_download.failed").waitFor();
  expect(await cut("attacker-events", 3)).toEqual([]);
  const wide = (testId: string) => page.getByTestId(testId).evaluate((table) => table.scrollWidth > table.parentElement!.clientWidth);
  expect(await wide("attacker-events")).toBe(false);

  await page.goto(`${core.api}/events`);
  await page.getByTestId("events").getByText("cowrie.session.file_upload.failed").waitFor();
  expect({ addresses: await cut("events", 2), types: await cut("events", 4), wide: await wide("events") }).toEqual({ addresses: [], types: [], wide: false });

  // A session's events (the page opens from the honeypot's session hash).
  await page.goto(`${core.api}/sessions/${base.session}`);
  await page.getByTestId("session-events").getByText("cowrie.session.file_download.failed").waitFor();
  expect({ types: await cut("session-events", 2), wide: await wide("session-events") }).toEqual({ types: [], wide: false });

  // /live's rows keep one height (it is virtualised), its columns a fixed width: wide enough for these.
  await page.goto(`${core.api}/live`);
  await page.getByTestId("live-events").getByText("cowrie.session.file_download.failed").waitFor();
  expect({ addresses: await cut("live-events", 2), types: await cut("live-events", 4), wide: await wide("live-events") }).toEqual({ addresses: [], types: [], wide: false });
}, 60_000);
