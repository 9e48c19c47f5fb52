import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { TerminalModes, parseCast, safeOutput, schedule } from "../../src/cli/replay";
import { LiveProcess, MAIN, cli } from "../cli/cli-helpers";
import { BIG_ID, BUN, EventStreamClient, getJson, registerNode, settled, startTestCore, until, type TestCore } from "../helpers";

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
    await settled(core);
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

/** A session on Core whose recording is `cast`; its Core id. */
async function recorded(core: TestCore, session: string, cast: string): Promise<number> {
  using node = await registerNode(core);
  node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.log.closed", timestamp: "2026-11-22T01:00:00Z", data: { session, src_ip: "203.0.113.9" } });
  const id = await until(async () => (await getJson(`${core.api}/api/v1/sessions?session=${session}`)).body.sessions[0]?.id, "the session");
  const data = Buffer.from(cast);
  node.send("SessionRecording", { node_id: BIG_ID, pot_id: "ssh-01", session, sha256: createHash("sha256").update(data).digest("hex"), size: data.length, offset: 0, data: data.toString("base64") });
  expect(await node.nextKind("SessionRecordingAck")).toMatchObject({ session, ok: true });
  return id;
}

describe("a replay gives the operator's terminal back as it found it", () => {
  // A full-screen program cut short: the alternate screen, a hidden cursor, concealed text.
  const takeover = "\u001b[?1049h\u001b[?25l\u001b[8msecret";
  const resets = "\u001b[?1049l\u001b[?25h\u001b[0m";
  const cast = (events: [number, string][]) => `{"version":2,"width":80,"height":24}\n${events.map((e) => JSON.stringify([e[0], "o", e[1]])).join("\n")}\n`;

  test("at the end of the recording", async () => {
    await using core = await startTestCore();
    const id = await recorded(core, "altscreen01", cast([[0.1, takeover]]));
    const r = await cli(["session", String(id), "--replay", "--speed", "1000"], core);
    expect([r.code, r.stderr, r.stdout]).toEqual([0, "", takeover + resets]);
  });

  test("on Ctrl-C (SIGINT) in the middle of it", async () => {
    await using core = await startTestCore();
    const id = await recorded(core, "altscreen02", cast([[0.1, takeover], [3600, "an hour later"]]));
    await using p = new LiveProcess([BUN, MAIN, "session", String(id), "--replay"], { env: { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws } });
    await p.waitFor("secret");
    p.proc.kill("SIGINT");
    await p.waitFor(resets);
    expect(await p.proc.exited).toBe(130);
    expect(p.stdout).toBe(takeover + resets);
  });

  test("only what the recording left changed is reset, in an order that holds", () => {
    const modes = new TerminalModes();
    expect(modes.resets()).toBe("");
    modes.feed("\u001b[1;31mred\u001b[0m \u001b[?25l\u001b[?25h \u001b[?2004h\u001b[4h\u001b[?7l\u001b[2;10r\u001b[38;5;0m");
    // Leaving the alternate screen restores the attributes saved on entering it: colours are reset after.
    modes.feed("\u001b[?1047h");
    expect(modes.resets()).toBe("\u001b[?1047l\u001b7\u001b[r\u001b8\u001b[?7h\u001b[4l\u001b[?2004l\u001b[0m");
    modes.feed("\u001b[?1047l\u001b[r\u001b[?7h\u001b[4l\u001b[?2004l\u001b[38;5;1;0m");
    expect(modes.resets()).toBe("");
  });
});
