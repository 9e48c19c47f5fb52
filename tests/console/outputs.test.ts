/**
 * Outputs and alert rules from the browser (Settings): an operator adds a webhook output in the
 * form built from its type's schema, against a webhook receiver this test runs, tests it (the
 * receiver gets the sample event), pauses it, edits it (the secret stays stored without being
 * shown), adds a rule routed to it, and a real SSH login on a real cowrie raises an alert the
 * receiver gets, signed with the kept secret. A read token sees the same tables without a
 * button. Then both are deleted after a confirmation.
 */
import { expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { sha256 } from "../../src/core/auth";
import { parseWithIds } from "../../src/protocol/json";
import { getJson, until } from "../helpers";
import { launchBrowser, sshAttack, startSystem } from "../helpers/console";

const SECRET = "receiver-secret-0123";

function receiver() {
  const events: any[] = [];
  const unsigned: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const text = await req.text();
      if (req.headers.get("x-honeybee-signature-256") !== `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`) unsigned.push(text);
      else events.push(...(parseWithIds(text) as { events: any[] }).events);
      return new Response("ok");
    },
  });
  return { server, events, unsigned, [Symbol.dispose]: () => server.stop(true) };
}

test("an operator adds, tests, pauses, edits and deletes a webhook output and a rule routed to it; a read token sees them without buttons", async () => {
  using hook = receiver();
  const tokens = [
    { name: "alice", role: "operator" as const, sha256: sha256("op-token-1") },
    { name: "rita", role: "read" as const, sha256: sha256("read-token-1") },
  ];
  await using sys = await startSystem({ tokens });
  const { core, nodeId, ports } = sys;
  const auth = { authorization: "Bearer op-token-1", "content-type": "application/json" };
  const rest = async (path: string) => (await getJson(`${core.api}${path}`, { headers: auth })).body;
  const install = { InstallPot: { pot_id: "ssh-01", honeypot_type: "cowrie", config: { ssh_port: String(ports.ssh), telnet_port: String(ports.telnet) }, auto_start: true } };
  expect((await getJson(`${core.api}/api/v1/nodes/${nodeId}/commands`, { method: "POST", headers: auth, body: JSON.stringify(install) })).status).toBe(202);

  await using browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(`${core.api}/settings`);
  await page.fill("#token", "op-token-1");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByTestId("outputs").getByText("No outputs yet.").waitFor();

  // The form comes from the webhook schema: its fields, descriptions and required marks.
  await page.getByRole("button", { name: "New output" }).click();
  const form = page.getByTestId("output-form");
  await form.getByLabel("type", { exact: true }).selectOption("webhook");
  expect(await form.getByLabel("url", { exact: true }).getAttribute("aria-required")).toBe("true");
  expect(await form.getByLabel("secret", { exact: true }).getAttribute("type")).toBe("password");
  await form.getByText("Where batches are POSTed.").waitFor();
  expect(await form.getByLabel("preset", { exact: true }).locator("option").allTextContents()).toEqual(["default (json)", "json", "slack", "teams"]);
  await form.getByLabel("name", { exact: true }).fill("hook");
  // A bad value: Core's answer names the field, and the form stays as it was.
  await form.getByLabel("url", { exact: true }).fill("ftp://example.org/");
  await form.getByRole("button", { name: "Add output" }).click();
  await form.getByRole("alert").getByText("400 bad_request: invalid webhook output: /url Expected string to match '^https?://'").waitFor();
  await form.getByLabel("url", { exact: true }).fill(`http://127.0.0.1:${hook.server.port}/hook`);
  await form.getByLabel("secret", { exact: true }).fill(SECRET);
  // Only the alerts of rules that name it.
  await form.getByLabel("event_types", { exact: true }).fill("");
  await form.getByRole("button", { name: "Add output" }).click();
  const row = page.locator('tr[data-output="hook"]');
  await row.waitFor();
  expect((await rest("/api/v1/outputs/hook")).definition).toMatchObject({ type: "webhook", secret: "(set)", event_types: [] });

  // Test: the receiver gets the sample event, signed.
  await row.getByRole("button", { name: "Test" }).click();
  await page.getByTestId("test-result").getByText("Test event delivered to hook").waitFor();
  expect(hook.events).toHaveLength(1);
  expect(hook.events[0]).toMatchObject({ id: 0, event_type: "cowrie.login.failed", data: { test: true } });

  // Pause, then edit: the stored secret shows as "(set)" and is kept.
  await row.getByRole("button", { name: "Pause" }).click();
  await row.locator(".badge", { hasText: "paused" }).waitFor();
  expect((await rest("/api/v1/outputs/hook")).status.state).toBe("paused");
  await row.getByRole("button", { name: "Edit" }).click();
  const secret = form.getByLabel("secret", { exact: true });
  expect([await secret.inputValue(), await secret.getAttribute("placeholder")]).toEqual(["", "(set)"]);
  await form.getByLabel("timeout_ms", { exact: true }).fill("5000");
  await form.getByRole("button", { name: "Save" }).click();
  await form.waitFor({ state: "detached" });
  expect((await rest("/api/v1/outputs/hook")).definition).toMatchObject({ timeout_ms: 5000, secret: "(set)" });
  await row.locator(".badge", { hasText: "paused" }).waitFor();
  await row.getByRole("button", { name: "Resume" }).click();
  await row.getByRole("button", { name: "Pause" }).waitFor();

  // A rule routed to it.
  await page.getByRole("button", { name: "New rule" }).click();
  const ruleForm = page.getByTestId("rule-form");
  await ruleForm.getByLabel("rule name").fill("root-login");
  await ruleForm.getByLabel("severity").selectOption("high");
  await ruleForm.getByLabel("event types").fill("cowrie.login.success");
  await ruleForm.getByRole("button", { name: "Add condition" }).click();
  await ruleForm.getByLabel("field", { exact: true }).fill("data.username");
  await ruleForm.getByLabel("value", { exact: true }).fill("root");
  await ruleForm.getByLabel("cooldown (s)").fill("0");
  await ruleForm.getByLabel("hook").check();
  await ruleForm.getByRole("button", { name: "Add rule" }).click();
  await page.locator('tr[data-rule="root-login"]').getByText("cowrie.login.success; data.username = root").waitFor();
  expect((await rest("/api/v1/rules/root-login")).rule).toMatchObject({ severity: "high", cooldown_ms: 0, outputs: ["hook"], match: { event_type: ["cowrie.login.success"], fields: [{ field: "data.username", equals: "root" }] } });

  // A real login on the real cowrie raises the alert, delivered with the kept secret.
  await until(async () => (await rest("/api/v1/honeypots")).honeypots?.some((p: any) => p.pot_id === "ssh-01" && p.status === "Running"), "cowrie Running");
  expect((await sshAttack(ports.ssh, "root", "123456")).code).toBe(0);
  const alert = await until(() => hook.events.find((e) => e.event_type === "alert.root-login"), "the alert at the receiver", 3000);
  expect(alert).toMatchObject({ pot_id: "ssh-01", src_ip: "127.0.0.1", data: { rule: "root-login", severity: "high", trigger: { event_type: "cowrie.login.success" } } });
  expect(hook.unsigned).toEqual([]);
  await row.locator("td.n").nth(1).getByText("1").waitFor();

  // A read token: the same tables, no buttons.
  const reader = await browser.newPage();
  await reader.goto(`${core.api}/settings`);
  await reader.fill("#token", "read-token-1");
  await reader.getByRole("button", { name: "Sign in" }).click();
  await reader.locator('tr[data-output="hook"]').waitFor();
  await reader.locator('tr[data-rule="root-login"]').waitFor();
  for (const card of ["#outputs", "#rules"]) expect(await reader.locator(card).getByRole("button").count()).toBe(0);

  // Deleted after a confirmation.
  const ruleRow = page.locator('tr[data-rule="root-login"]');
  await ruleRow.getByRole("button", { name: "Delete" }).click();
  await ruleRow.getByRole("button", { name: "Yes, delete" }).click();
  await ruleRow.waitFor({ state: "detached" });
  await row.getByRole("button", { name: "Delete" }).click();
  await row.getByRole("button", { name: "Cancel" }).click();
  await row.getByRole("button", { name: "Delete" }).click();
  await row.getByRole("button", { name: "Yes, delete" }).click();
  await row.waitFor({ state: "detached" });
  expect([(await getJson(`${core.api}/api/v1/outputs/hook`, { headers: auth })).status, (await getJson(`${core.api}/api/v1/rules/root-login`, { headers: auth })).status]).toEqual([404, 404]);
}, 90_000);
