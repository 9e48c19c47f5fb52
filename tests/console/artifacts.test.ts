/**
 * The console's malware pages in a real browser, with real artifacts: OpenSSH sessions from two
 * addresses whose `wget` in the node's cowrie fetched files from the test's web server. The
 * list, one artifact's page (its sessions, sources and URLs), the zip an operator downloads
 * (7-Zip opens it with `infected`), no download for a read token, and the links to the artifact
 * from a session's files and an attacker's downloads.
 */
import { expect, test } from "bun:test";
import { getJson } from "../helpers";
import { DROPPER, ELF, OPERATOR, READER, fetchArtifacts, sha, startArtifactSystem } from "../helpers/artifact-attack";
import { requireTool } from "../helpers/clients";
import { launchBrowser } from "../helpers/console";

const shown = (iso: string) => iso.replace("T", " ").replace(/\.\d+Z$/, "Z");

test("artifacts: the list, one artifact's sessions, sources and URLs, the zip for an operator and none for a read token", async () => {
  await using a = await startArtifactSystem();
  const { core } = a.sys;
  const { elf, dropper } = await fetchArtifacts(a);
  await using browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 }, acceptDownloads: true });
  context.setDefaultTimeout(30_000);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(core.api + "/artifacts");
  await page.fill("#token", OPERATOR);
  await page.getByRole("button", { name: "Sign in" }).click();

  // The list: both files, last seen first, with type, size, times, sessions, sources and URL.
  const table = page.getByTestId("artifacts");
  const row = (hash: string) => table.locator(`tr[data-sha256="${hash}"]`);
  await row(elf.sha256).waitFor();
  expect(await table.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-sha256")))).toEqual(
    (await getJson(`${core.api}/api/v1/artifacts`, a.auth(READER))).body.artifacts.map((x: any) => x.sha256),
  );
  expect(await row(elf.sha256).locator("td").allTextContents()).toEqual([
    `${elf.sha256.slice(0, 16)}…`,
    "application/x-elf",
    "3.0 KiB",
    shown(elf.first_seen),
    shown(elf.last_seen),
    "2",
    "2",
    `${a.web}/bins/x86 +1`,
  ]);
  expect(await row(dropper.sha256).locator("td").allTextContents()).toEqual([
    `${dropper.sha256.slice(0, 16)}…`,
    "text/x-shellscript",
    `${DROPPER.length} B`,
    shown(dropper.first_seen),
    shown(dropper.last_seen),
    "1",
    "1",
    `${a.web}/x.sh`,
  ]);

  // One artifact: its facts, every sighting's session and attacker, its URLs.
  await row(elf.sha256).getByRole("link").click();
  await page.waitForURL(`${core.api}/artifacts/${elf.sha256}`);
  const facts = page.getByTestId("artifact-facts");
  await facts.getByText(elf.sha256).waitFor();
  expect(await facts.locator("div").evaluateAll((ds) => ds.map((d) => [d.querySelector("dt")?.textContent, d.querySelector("dd")?.textContent]))).toEqual([
    ["SHA-256", elf.sha256],
    ["Type", "application/x-elf (.elf)"],
    ["Size", `3.0 KiB (${ELF.length.toLocaleString("en-US")} bytes)`],
    ["First seen", shown(elf.first_seen)],
    ["Last seen", shown(elf.last_seen)],
    ["Sessions", "2"],
    ["Sources", "2"],
  ]);
  const sources = page.getByTestId("sources");
  expect(await sources.getByRole("link").evaluateAll((ls) => ls.map((l) => [l.textContent, l.getAttribute("href")]))).toEqual([
    ["127.0.0.1", "/attackers/127.0.0.1"],
    ["127.0.0.2", "/attackers/127.0.0.2"],
  ]);
  expect(await page.getByTestId("urls").locator("li").allTextContents()).toEqual([`${a.web}/bins/x86`, `${a.web}/mirror/x86`]);
  const sightings = page.getByTestId("sightings");
  for (const s of elf.sightings) {
    const line = sightings.locator("tr", { hasText: s.url });
    expect(await line.getByRole("link", { name: s.session }).getAttribute("href")).toBe(`/sessions/${s.session_id}`);
    expect(await line.getByRole("link", { name: s.src_ip }).getAttribute("href")).toBe(`/attackers/${s.src_ip}`);
  }
  expect(elf.sightings.map((s: any) => s.src_ip)).toEqual(["127.0.0.1", "127.0.0.2"]);

  // The operator's download: a zip whose only entry 7-Zip opens with `infected`, to the exact bytes.
  await page.getByTestId("zip-password").getByText("infected").waitFor();
  const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("button", { name: "Download zip" }).click()]);
  expect(download.suggestedFilename()).toBe(`${elf.sha256}.zip`);
  const zip = await download.path();
  expect(Bun.spawnSync([requireTool("7z"), "e", "-so", "-pwrong", zip]).exitCode).not.toBe(0);
  const listing = Bun.spawnSync([requireTool("7z"), "l", "-slt", zip]).stdout.toString();
  expect(listing).toContain(`Path = ${elf.sha256}.bin`);
  expect(listing).toContain("Encrypted = +");
  const opened = Bun.spawnSync([requireTool("7z"), "e", "-so", "-pinfected", zip]);
  expect(opened.exitCode).toBe(0);
  expect(sha(opened.stdout)).toBe(elf.sha256);

  // From a session's files and from an attacker's downloads to the artifact.
  const second = elf.sightings[1];
  await sightings.getByRole("link", { name: second.session }).click();
  await page.waitForURL(`${core.api}/sessions/${second.session_id}`);
  await page.locator("#files").getByRole("link", { name: elf.sha256 }).click();
  await page.waitForURL(`${core.api}/artifacts/${elf.sha256}`);
  await page.goto(`${core.api}/attackers/127.0.0.1`);
  const downloads = page.locator("#downloads");
  await downloads.getByText(`${a.web}/x.sh`).waitFor();
  expect(await downloads.locator("li", { hasText: `${a.web}/x.sh` }).getByRole("link", { name: "artifact" }).getAttribute("href")).toBe(`/artifacts/${dropper.sha256}`);
  expect(await downloads.locator("li", { hasText: `${a.web}/bins/x86` }).getByRole("link", { name: "artifact" }).getAttribute("href")).toBe(`/artifacts/${elf.sha256}`);

  // A read token sees the artifact and the password, never a download button.
  const reader = await browser.newPage();
  await reader.goto(`${core.api}/artifacts/${elf.sha256}`);
  await reader.fill("#token", READER);
  await reader.getByRole("button", { name: "Sign in" }).click();
  await reader.getByTestId("artifact-facts").getByText(elf.sha256).waitFor();
  await reader.getByText("Downloads need an operator token").waitFor();
  await reader.getByTestId("zip-password").getByText("infected").waitFor();
  expect(await reader.getByRole("button", { name: "Download zip" }).count()).toBe(0);
  // An unknown hash says so.
  await reader.goto(`${core.api}/artifacts/${"0".repeat(64)}`);
  await reader.getByText(`Core has no artifact with SHA-256 ${"0".repeat(64)}`).waitFor();
  expect(errors).toEqual([]);
}, 90_000);
