/**
 * Attackers' text in the console is bidi-isolated: a username that starts with a right-to-left
 * override (U+202E) turns itself around, never the text after it on the line (the password,
 * a badge, the next value). Measured in Debian's chromium, where the text is laid out.
 */
import { expect, test } from "bun:test";
import type { Locator } from "playwright-core";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, getJson, startTestCore, until } from "../helpers";
import { launchBrowser } from "../helpers/console";

const RLO = "\u202e";

/**
 * Where `before` and `after` are drawn inside `root`, and whether an element inside `root` holds
 * `before` isolated. The cell itself does not count: HTML's own style isolates every td, li and
 * dd already, and a paragraph's text is laid out within it, so an override never reaches the
 * next cell, only what follows it in its own.
 */
function layout(root: Locator, before: string, after: string) {
  return root.evaluate(
    (el, [a, b]) => {
      // Runs in the page; the tests' TypeScript has no DOM types.
      const { document, getComputedStyle } = globalThis as any;
      const find = (needle: string) => {
        const walker = document.createTreeWalker(el, 4 /* NodeFilter.SHOW_TEXT */);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const i = n.data.indexOf(needle);
          if (i < 0) continue;
          const r = document.createRange();
          r.setStart(n, i);
          r.setEnd(n, i + needle.length);
          return { node: n, rect: r.getBoundingClientRect() };
        }
        throw new Error(`no ${needle} in ${el.outerHTML}`);
      };
      const x = find(a!);
      const y = find(b!);
      let isolated = false;
      for (let p = x.node.parentElement; p && p !== el; p = p.parentElement) if (getComputedStyle(p).unicodeBidi.startsWith("isolate")) isolated = true;
      return { isolated, inOrder: y.rect.left >= x.rect.right };
    },
    [before, after],
  );
}

const kept = { isolated: true, inOrder: true };

async function expectKept(where: string, root: Locator, before = "evil", after = "pw") {
  await root.getByText(before, { exact: false }).first().waitFor();
  expect({ where, ...(await layout(root, before, after)) }).toEqual({ where, ...kept });
}

test("a right-to-left override in a username turns only the username around, wherever it is shown", async () => {
  await using core = await startTestCore();
  await using browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  await page.goto(core.api + "/live");
  await page.locator(".dot.open").waitFor();
  const ev = (o: Record<string, unknown>) => stringify({ pot_id: "ssh-01", pot_type: "cowrie", session: "b1d1b1d1b1d1", src_ip: "198.51.100.23", timestamp: new Date().toISOString(), ...o });
  {
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const lines = [
      ev({ eventid: "cowrie.session.connect" }),
      ev({ eventid: "cowrie.login.success", username: `${RLO}evil`, password: "pw" }),
      ev({ eventid: "cowrie.command.input", input: `${RLO}evil-command` }),
    ];
    c.send(lines);
    await c.ack(lines.length);
  }

  const liveRow = page.getByTestId("live-events").locator("tr", { hasText: "pw" });
  await expectKept("/live", liveRow.locator("td").nth(4));

  await page.goto(core.api + "/events");
  const row = page.getByTestId("events").locator("tr", { hasText: "pw" });
  await expectKept("/events", row.locator("td").nth(4));
  // The whole event as JSON shows the override as its escape, where the reader sees it.
  await row.getByRole("button").click();
  expect(await page.locator("pre.json").textContent()).toContain('"username": "\\u202eevil"');

  const session = await until(async () => (await getJson(`${core.api}/api/v1/sessions?session=b1d1b1d1b1d1`)).body.sessions[0]?.id, "the session");
  await page.goto(core.api + "/sessions");
  const login = page.getByTestId("sessions").locator("td.login-cell");
  await expectKept("/sessions", login);
  // The cells themselves stay in their order too.
  const [cell, next] = await Promise.all([login.boundingBox(), login.locator("xpath=following-sibling::td[1]").boundingBox()]);
  expect(next!.x).toBeGreaterThanOrEqual(cell!.x + cell!.width);

  await page.goto(`${core.api}/sessions/${session}`);
  await expectKept("session credentials", page.getByTestId("credentials").locator("td").first());
  await expectKept("session events", page.getByTestId("session-events").locator("tr", { hasText: "pw" }).locator("td").nth(2));

  await page.goto(core.api + "/attackers/198.51.100.23");
  await expectKept("attacker credentials", page.getByTestId("credentials").locator("td").first());
  await expectKept("attacker events", page.getByTestId("attacker-events").locator("tr", { hasText: "pw" }).locator("td").nth(3));
  const command = page.getByTestId("commands").locator("li").first();
  await command.waitFor();
  expect(await command.evaluate((li) => [li.firstElementChild?.tagName, li.firstElementChild?.textContent])).toEqual(["BDI", `${RLO}evil-command`]);

  await page.goto(core.api + "/");
  const top = page.getByTestId("top-usernames").locator(".val").first();
  await top.waitFor();
  expect(await top.evaluate((v) => [v.textContent, (globalThis as any).getComputedStyle(v).unicodeBidi])).toEqual([`${RLO}evil`, "isolate"]);
}, 60_000);
