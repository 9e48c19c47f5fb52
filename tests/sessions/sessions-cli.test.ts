import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCast, safeOutput, schedule } from "../../src/cli/replay";
import { cli } from "../cli/cli-helpers";
import { EventStreamClient, startTestCore } from "../helpers";

const SAMPLES = readFileSync(join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl"), "utf8").trim().split("\n");

describe("honeybee sessions / session", () => {
  test("a table of sessions with filters, --json, and one session's page by either id; attackers' text escaped", async () => {
    await using core = await startTestCore();
    // A password with a terminal escape: shown escaped, never raw.
    const hostile = JSON.stringify({ eventid: "cowrie.login.success", session: "feedc0de0001", src_ip: "192.0.2.66", username: "root", password: "\u001b]0;owned\u0007", pot_id: "ssh-01", pot_type: "cowrie", timestamp: "2026-11-22T02:00:00Z" });
    const lines = [...SAMPLES, hostile];
    {
      using c = await EventStreamClient.connect(core.ports.event, { acks: true });
      c.send(lines);
      await c.ack(lines.length);
    }
    const table = await cli(["sessions"], core);
    expect(table.code).toBe(0);
    const rows = table.stdout.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^ID\s+START \(UTC\)\s+POT\s+SOURCE\s+DURATION\s+LOGIN\s+CMDS\s+FILES\s+TTY$/);
    expect(rows.slice(1).map((r) => r.trim().split(/\s+/)[0])).toEqual(["1", "2", "3", "4"]);
    expect(rows[4]).toContain("root / \\x1b]0;owned\\x07");
    expect(table.stdout).not.toContain("\u001b");

    const logins = await cli(["sessions", "--login", "--commands", "--json"], core);
    expect(logins.code).toBe(0);
    expect(logins.json.sessions.map((s: any) => s.session)).toEqual(["3de86d0a163a", "4f1da0ba5dbe"]);
    expect(logins.json.next_cursor).toBeNull();

    const page = await cli(["session", "4f1da0ba5dbe"], core);
    expect(page.code).toBe(0);
    expect(page.stdout).toContain("Session 3: cowrie session 4f1da0ba5dbe on cowrie-lab");
    expect(page.stdout).toContain("Login: root / toor");
    expect(page.stdout).toMatch(/admin\s+wrongpw\s+failed/);
    expect(page.stdout).toContain("uname -a; whoami");
    expect(page.stdout).toContain("Recording: made by the honeypot, not received from its node yet");
    expect((await cli(["session", "3", "--json"], core)).json.session_events).toHaveLength(8);

    const noRecording = await cli(["session", "1", "--replay"], core);
    expect(noRecording.code).toBe(1);
    expect(noRecording.stderr).toContain("session 1 has no recording");
    const missing = await cli(["session", "nosuchsession"], core);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no session nosuchsession");
    expect((await cli(["session", "1", "--speed", "2"], core)).code).toBe(2);
  });
});

describe("replay", () => {
  test("reads asciicast v2 output events and their pace, with --speed and --max-idle", () => {
    const cast = parseCast('{"version":2,"width":80,"height":24}\n[0.5,"o","a"]\n[0.6,"i","x"]\n[10.5,"o","b"]\n');
    expect(cast.output).toEqual([[0.5, "a"], [10.5, "b"]]);
    expect(schedule(cast.output, 1, null)).toEqual([500, 10_500]);
    expect(schedule(cast.output, 10, null)).toEqual([50, 1050]);
    expect(schedule(cast.output, 1, 2)).toEqual([500, 2500]);
    expect(() => parseCast('{"version":1}\n')).toThrow("version 1");
  });

  test("what a shell needs passes as it is; what would drive the operator's terminal is escaped", () => {
    const shell = "root@web-3:~# ls\r\n\u001b[0m\u001b[01;34mbin\u001b[0m  x\r\n\b\u001b[K\u001b[2J\u001b[?25l\u001b[?25h";
    expect(safeOutput(shell)).toBe(shell);
    expect(safeOutput("\u001b]0;title\u0007")).toBe("\\x1b]0;title\\x07");
    expect(safeOutput("\u001b[6n\u001b[c\u001b[?1000h\u009b31m")).toBe("\\x1b[6n\\x1b[c\\x1b[?1000h\\x9b31m");
  });
});
