/**
 * HASSH in the CLI: `honeybee events --hassh` finds one SSH client's key exchanges, `honeybee
 * stats` lists the fingerprints (and the commands), fed with real Cowrie 2.9 kex lines.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EventStreamClient, startTestCore } from "../helpers";
import { cli } from "./cli-helpers";

const SAMPLE = join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl");
/** Debian's OpenSSH client, as Cowrie 2.9 printed it in the sample. */
const OPENSSH = "472b5de333ad665af5cbf10ff892c4df";

test("honeybee events --hassh and the stats' HASSH and command tables", async () => {
  await using core = await startTestCore();
  const now = new Date().toISOString();
  const kex = readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((l) => l.includes('"cowrie.client.kex"'))
    .map((l) => ({ ...JSON.parse(l), timestamp: now }));
  expect(kex.length).toBe(2);
  const lines = [
    ...kex,
    // Another client's fingerprint, and a `hassh` on an event that is not a key exchange: neither matches.
    { ...kex[0], session: "0aa1bb2cc3dd", hassh: "0123456789abcdef0123456789abcdef" },
    { eventid: "cowrie.login.failed", username: "root", password: "x", hassh: OPENSSH, src_ip: "203.0.113.7", timestamp: now, honeybee_honeypot_id: "cowrie-lab" },
    { eventid: "cowrie.command.input", input: "uname -a", session: "0aa1bb2cc3dd", src_ip: "203.0.113.7", timestamp: now, honeybee_honeypot_id: "cowrie-lab" },
  ];
  using pot = await EventStreamClient.connect(core.ports.event, { acks: true });
  pot.send(lines.map((l) => JSON.stringify(l)));
  await pot.ack(lines.length);

  const found = await cli(["events", "--json", "--hassh", OPENSSH.toUpperCase()], core);
  expect(found.code).toBe(0);
  expect(found.json.events.map((e: { event_type: string; data: { hassh: string } }) => [e.event_type, e.data.hassh])).toEqual([
    ["cowrie.client.kex", OPENSSH],
    ["cowrie.client.kex", OPENSSH],
  ]);
  const bad = await cli(["events", "--hassh", "not-a-fingerprint"], core);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("expected a HASSH: 32 hexadecimal digits");

  const stats = await cli(["stats"], core);
  expect(stats.code).toBe(0);
  const out = stats.stdout.split("\n");
  expect(out.some((l) => /^HASSH \(SSH CLIENT\)\s+COUNT$/.test(l))).toBe(true);
  expect(out.find((l) => l.startsWith(OPENSSH))).toMatch(new RegExp(`^${OPENSSH}\\s+2$`));
  expect(out.find((l) => l.startsWith("0123456789abcdef"))).toMatch(/\s1$/);
  expect(out.some((l) => /^COMMAND\s+COUNT$/.test(l))).toBe(true);
  expect(out.find((l) => l.startsWith("uname -a"))).toMatch(/^uname -a\s+1$/);
});
