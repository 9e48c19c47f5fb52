/**
 * `honeybee artifacts` against a real Core whose node's cowrie fetched real files (wget in
 * OpenSSH sessions from two addresses): the list, one artifact with its sightings, and the
 * download as a zip encrypted with `infected` (an operator's token only).
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { getJson, tempDir } from "../helpers";
import { DROPPER, ELF, OPERATOR, READER, fetchArtifacts, sha, startArtifactSystem } from "../helpers/artifact-attack";
import { requireTool } from "../helpers/clients";
import { cli } from "./cli-helpers";

test("honeybee artifacts: the list, one artifact with its sightings, --download as an operator", async () => {
  await using a = await startArtifactSystem();
  const { core } = a.sys;
  const { elf, dropper } = await fetchArtifacts(a);
  const read = { HONEYBEE_TOKEN: READER };

  // The table: newest last, a short hash, size, type, first and last seen, sessions and sources.
  const list = await cli(["artifacts"], core, read);
  expect(list.code).toBe(0);
  const lines = list.stdout.trimEnd().split("\n");
  expect(lines[0]).toMatch(/^SHA-256\s+SIZE\s+TYPE\s+FIRST SEEN \(UTC\)\s+LAST SEEN \(UTC\)\s+SESSIONS\s+SOURCES$/);
  const row = (hash: string) => lines.find((l) => l.startsWith(hash.slice(0, 12)))?.split(/\s{2,}/);
  const time = (iso: string) => iso.replace("T", " ").slice(0, 19);
  expect(row(elf.sha256)).toEqual([elf.sha256.slice(0, 12), "3.0 KiB", "application/x-elf", time(elf.first_seen), time(elf.last_seen), "2", "2"]);
  expect(row(dropper.sha256)).toEqual([dropper.sha256.slice(0, 12), `${DROPPER.length} B`, "text/x-shellscript", time(dropper.first_seen), time(dropper.last_seen), "1", "1"]);
  expect(lines.length).toBe(3);

  // --json is REST's page (oldest first), with its cursor: options go to REST.
  const json = await cli(["artifacts", "--json", "--limit", "1"], core, read);
  const rest = (await getJson(`${core.api}/api/v1/artifacts?limit=1`, a.auth(READER))).body;
  expect(rest.next_cursor).toMatch(/^\d+:[0-9a-f]{64}$/);
  expect(json.json).toEqual({ artifacts: rest.artifacts, next_cursor: rest.next_cursor });

  // One artifact, by the 12 digits the table shows (or the whole hash, below): its facts and every sighting
  // with Core's session id and the attacker's address.
  const one = await cli(["artifacts", elf.sha256.slice(0, 12)], core, read);
  expect(one.code).toBe(0);
  expect(one.stdout).toContain(`Artifact:   ${elf.sha256}\nType:       application/x-elf (.elf)\nSize:       3.0 KiB (${ELF.length} bytes)\n`);
  expect(one.stdout).toContain(`Sessions:   2\nSources:    2: ${elf.sources.join(", ")}\nURLs:       ${a.web}/bins/x86\n            ${a.web}/mirror/x86\n`);
  expect(one.stdout).toContain(`honeybee artifacts ${elf.sha256} --download FILE   (a zip, password "infected")`);
  for (const s of elf.sightings) {
    expect(one.stdout.split("\n").find((l) => l.startsWith(time(s.seen_at)) && l.includes(s.url))?.split(/\s{2,}/)).toEqual([time(s.seen_at), "ssh-01", String(s.session_id), s.src_ip, s.url, s.filename]);
  }

  // The download: refused to a read token, a zip encrypted with `infected` for an operator.
  using dir = tempDir();
  const file = join(dir.path, "x86.zip");
  const refused = await cli(["artifacts", elf.sha256, "--download", file], core, read);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain("; downloads need an operator's token (HONEYBEE_TOKEN)");
  expect(existsSync(file)).toBe(false);
  const saved = await cli(["artifacts", elf.sha256, "--download", file], core, { HONEYBEE_TOKEN: OPERATOR });
  expect(saved.code).toBe(0);
  expect(saved.stdout).toMatch(new RegExp(`^${file}: \\d+ bytes, a zip holding ${elf.sha256}\\.bin, password "infected"`));
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(readFileSync(file).includes(ELF.subarray(0, 64))).toBe(false);
  expect(Bun.spawnSync([requireTool("7z"), "e", "-so", "-pwrong", file]).exitCode).not.toBe(0);
  const out = Bun.spawnSync([requireTool("7z"), "e", "-so", "-pinfected", file]);
  expect(out.exitCode).toBe(0);
  expect(sha(out.stdout)).toBe(sha(ELF));
});
