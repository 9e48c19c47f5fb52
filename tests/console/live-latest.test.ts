/**
 * /live opens with the latest stored events, then adds what the feed brings, each event once.
 */
import { expect, test } from "bun:test";
import { EventStreamClient, startTestCore } from "../helpers";
import { launchBrowser } from "../helpers/console";

const line = (password: string) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", pot_type: "cowrie", src_ip: "203.0.113.7", username: "root", password });

test("/live starts with the latest events and appends live ones without duplicates", async () => {
  await using core = await startTestCore();
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send([line("before-1"), line("before-2"), line("before-3")]);
  await c.ack(3);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/live`);
  const rows = page.getByTestId("live-events").locator("tbody tr");
  await rows.filter({ hasText: "root / before-1" }).waitFor();
  await page.locator(".dot.open").waitFor();
  c.send([line("after-1")]);
  await c.ack(4);
  await rows.filter({ hasText: "root / after-1" }).waitFor();
  expect((await rows.allTextContents()).map((t) => t.match(/root \/ (\S+)/)?.[1])).toEqual(["after-1", "before-3", "before-2", "before-1"]);
}, 60_000);
