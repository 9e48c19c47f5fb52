/**
 * External pots in a real browser: the node's page offers only Remove for them, /nodes lists
 * those of no node.
 */
import { expect, test } from "bun:test";
import { BIG_ID, EventStreamClient, getJson, registerNode, startTestCore, until } from "../helpers";
import { launchBrowser } from "../helpers/console";

const line = (potId: string) => JSON.stringify({ eventid: "cowrie.login.failed", src_ip: "203.0.113.7", username: "root", password: "x", honeybee_honeypot_id: potId });

test("an External pot offers only Remove, which takes it out of the registry; /nodes shows those of no node", async () => {
  await using core = await startTestCore();
  using node = await registerNode(core);
  node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", status: "Running" });
  const relayed = await EventStreamClient.connect(core.ports.event, { node_id: BIG_ID, acks: true });
  relayed.send(line("edge-ssh"));
  const direct = await EventStreamClient.connect(core.ports.event, { acks: true });
  direct.send(line("lab-ssh"));
  await Promise.all([relayed.ack(1), direct.ack(1)]);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);
  page.on("dialog", (d) => d.accept());
  await page.goto(`${core.api}/nodes`);
  await page.getByTestId("no-node").getByText("lab-ssh").waitFor();
  await page.goto(`${core.api}/nodes/${BIG_ID}`);
  const edge = page.getByTestId("pots").locator('tr[data-pot="edge-ssh"]');
  await edge.locator(".badge", { hasText: "External" }).waitFor();
  expect(await edge.getByRole("button").allTextContents()).toEqual(["Remove"]);
  expect(await page.getByTestId("pots").locator('tr[data-pot="ssh-01"]').getByRole("button").allTextContents()).toEqual(["Start", "Stop", "Restart", "Remove"]);
  await edge.getByRole("button", { name: "Remove edge-ssh" }).click();
  await edge.waitFor({ state: "detached" });
  await until(async () => !(await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots.some((p: { pot_id: string }) => p.pot_id === "edge-ssh"), "edge-ssh removed");
  relayed.socket.end();
  direct.socket.end();
}, 90_000);
