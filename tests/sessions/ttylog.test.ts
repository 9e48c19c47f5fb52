/**
 * The built-in cowrie's terminal recordings, as files in the pot's folder: Telnet shells are
 * recorded like SSH ones (tests/sessions/session-recording.test.ts), and `tty_max_bytes`
 * bounds a recording that the session would make larger.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCast } from "../../src/cli/replay";
import { RawClient, Relay, removeDir, startPot, type Pot } from "../honeypots/harness";

let relay: Relay;
let pot: Pot<"cowrie">;

beforeAll(async () => {
  relay = Relay.start();
  pot = await startPot("cowrie", { ssh_port: "0", telnet_port: "0", hostname: "db-prod-2", tty_max_bytes: "4096" }, relay);
});

afterAll(async () => {
  if (pot.proc.exitCode === null) await pot.stop();
  relay.stop();
  removeDir(pot.dir);
});

async function telnetSession(lines: string[]): Promise<{ seen: string; closed: any; events: any[] }> {
  const c = await RawClient.connect(pot.ports.telnet);
  await c.waitFor("db-prod-2 login: ");
  c.send("root\r\n");
  await c.waitFor("Password: ");
  c.send("toor\r\n");
  await c.waitFor("root@db-prod-2:~# ");
  for (const line of lines) c.send(`${line}\r\n`);
  await c.closed;
  const connect = await relay.event("cowrie.session.connect", { src_port: c.localPort });
  const closed = await relay.event("cowrie.log.closed", { session: connect.session });
  await relay.event("cowrie.session.closed", { session: connect.session });
  return { seen: c.text, closed, events: relay.session(connect.session) };
}

test("a Telnet shell is recorded from the login on: its output is what the client saw after it", async () => {
  const { seen, closed, events } = await telnetSession(["uname -a", "exit"]);
  const file = readFileSync(join(pot.dir, closed.ttylog));
  expect(closed).toMatchObject({ ttylog: `tty/${closed.shasum}.cast`, size: file.length, shasum: createHash("sha256").update(file).digest("hex"), duplicate: false, message: `Closing TTY Log: ${closed.ttylog} after ${closed.duration} seconds` });
  expect(events.map((e) => e.eventid).slice(-2)).toEqual(["cowrie.log.closed", "cowrie.session.closed"]);
  const cast = parseCast(file.toString());
  expect(cast.header).toMatchObject({ version: 2, width: 80, height: 24 });
  // The recording starts with the shell (its banner after the login) and holds the rest of
  // what the client saw, byte for byte.
  const output = cast.output.map(([, d]) => d).join("");
  expect(output).toStartWith("Linux db-prod-2 6.1.0-26-amd64");
  expect(output.endsWith("root@db-prod-2:~# logout\r\n")).toBe(true);
  expect(seen.endsWith(output)).toBe(true);
  const inputs = file.toString().split("\n").filter((l) => l.includes('"i"')).map((l) => JSON.parse(l)[2]).join("");
  expect(inputs).toBe("uname -a\r\nexit\r\n");
});

test("past tty_max_bytes the recording stops, stays valid asciicast, and the session goes on", async () => {
  const { seen, closed } = await telnetSession(["cat /proc/cpuinfo", "cat /proc/cpuinfo", "echo still-here", "exit"]);
  expect(seen).toContain("still-here");
  const file = readFileSync(join(pot.dir, closed.ttylog));
  expect(file.length).toBeLessThanOrEqual(4096);
  expect(closed.size).toBe(file.length);
  const cast = parseCast(file.toString());
  expect(cast.output.length).toBeGreaterThan(0);
  expect(cast.output.map(([, d]) => d).join("")).not.toContain("still-here");
});
