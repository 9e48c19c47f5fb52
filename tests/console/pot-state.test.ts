/**
 * A pot's controls follow its state, and a Failed pot says why on its own row.
 */
import { expect, test } from "bun:test";
import { BIG_ID, getJson, registerNode, startTestCore, until } from "../helpers";
import { launchBrowser } from "../helpers/console";

test("Start is off for a Running pot, Stop for a Stopped or Failed one; a Failed pot shows its error", async () => {
  await using core = await startTestCore();
  using node = await registerNode(core);
  const report = (pot_id: string, status: string, message?: string) => node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id, pot_type: "cowrie", status, message });
  report("up", "Running");
  report("down", "Stopped");
  report("broken", "Failed", "install failed: pip exited with 1");
  await until(async () => (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots?.length === 3, "three pots");
  expect((await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`)).body.honeypots.find((p: { pot_id: string }) => p.pot_id === "broken").message).toBe("install failed: pip exited with 1");

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/nodes/${BIG_ID}`);
  const enabled = async (pot: string) => {
    const row = page.locator(`tr[data-pot="${pot}"]`);
    await row.waitFor();
    return Object.fromEntries(await Promise.all((await row.getByRole("button").all()).map(async (b) => [await b.textContent(), await b.isEnabled()])));
  };
  expect(await enabled("up")).toEqual({ Start: false, Stop: true, Restart: true, Remove: true });
  expect(await enabled("down")).toEqual({ Start: true, Stop: false, Restart: true, Remove: true });
  expect(await enabled("broken")).toEqual({ Start: true, Stop: false, Restart: true, Remove: true });
  expect(await page.locator('tr[data-pot="broken"]').textContent()).toContain("install failed: pip exited with 1");
}, 60_000);
