import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../../src/protocol/json";
import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { keptDatabase } from "../helpers/kept-db";
import { goPotLog } from "../helpers/go-node";
import { BIG_ID, EventStreamClient, getJson, registerNode, settled, startTestCore, tempDir, until, type TestCore } from "../helpers";

const SAMPLES = readFileSync(join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl"), "utf8").trim().split("\n");

async function ingest(core: TestCore, lines: string[]): Promise<void> {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  c.send(lines);
  await c.ack(lines.length);
  await settled(core);
}

async function recordedSessions(db: string): Promise<unknown[]> {
  if (!db.startsWith("postgres")) {
    using file = new Database(db, { readonly: true });
    return file.query("select session from session_recordings").all();
  }
  const sql = new SQL(db, { max: 1 });
  try {
    return [...(await sql`select session from session_recordings`)];
  } finally {
    await sql.close();
  }
}

const list = async (core: TestCore, query = "") => {
  const res = await getJson(`${core.api}/api/v1/sessions?${query}`);
  expect(res.status).toBe(200);
  return res.body as { sessions: any[]; next_cursor: string | null };
};
const sessionIds = async (core: TestCore, query: string) => (await list(core, query)).sessions.map((s) => s.session);

describe("sessions from flat Cowrie lines on the event socket", () => {
  test("the sample's three sessions, with their filters and pages", async () => {
    await using core = await startTestCore();
    await ingest(core, SAMPLES);
    const all = await list(core);
    expect(all.sessions.map((s) => s.session)).toEqual(["4f1da0ba5dbe", "3de86d0a163a", "61cb4b9d22c9"]);
    expect(all.next_cursor).toBeNull();
    expect(all.sessions[0]).toEqual({
      id: 3,
      session: "4f1da0ba5dbe",
      node_id: null,
      pot_id: "cowrie-lab",
      pot_type: "cowrie",
      src_ip: "127.0.0.1",
      start: "2026-11-22T01:07:43.179Z",
      end: "2026-11-22T01:07:43.387Z",
      duration: 0.208,
      events: 8,
      login_success: true,
      username: "root",
      password: "toor",
      commands: 2,
      files: 0,
      recording: true,
      closed: true,
    });
    expect(all.sessions[2]).toMatchObject({ session: "61cb4b9d22c9", events: 5, login_success: false, username: null, commands: 0, recording: false, closed: true });

    expect(await sessionIds(core, "login_success=true")).toEqual(["4f1da0ba5dbe", "3de86d0a163a"]);
    expect(await sessionIds(core, "login_success=false")).toEqual(["61cb4b9d22c9"]);
    expect(await sessionIds(core, "has_commands=true&login_success=true")).toEqual(["4f1da0ba5dbe", "3de86d0a163a"]);
    expect(await sessionIds(core, "has_commands=false")).toEqual(["61cb4b9d22c9"]);
    expect(await sessionIds(core, "has_download=true")).toEqual([]);
    expect(await sessionIds(core, "src_ip=127.0.0.1&pot_id=cowrie-lab")).toHaveLength(3);
    expect(await sessionIds(core, "src_ip=192.0.2.1")).toEqual([]);
    expect(await sessionIds(core, "pot_type=honnypotter")).toEqual([]);
    expect(await sessionIds(core, "session=3de86d0a163a")).toEqual(["3de86d0a163a"]);
    expect(await sessionIds(core, "since=2026-11-22T01:07:43.1Z")).toEqual(["4f1da0ba5dbe", "3de86d0a163a"]);
    expect(await sessionIds(core, "until=2026-11-22T01:07:43Z")).toEqual(["61cb4b9d22c9"]);

    const first = await list(core, "limit=2");
    expect(first.sessions.map((s) => s.id)).toEqual([3, 2]);
    expect((await list(core, `limit=2&cursor=${first.next_cursor}`)).sessions.map((s) => s.id)).toEqual([1]);

    const bad = await getJson(`${core.api}/api/v1/sessions?has_commands=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("bad_request");
    expect(bad.body.error.message).toContain("has_commands");
  });

  test("a session page: its events in order, credentials, commands, the recording's state", async () => {
    await using core = await startTestCore();
    await ingest(core, SAMPLES);
    const id = (await list(core, "session=4f1da0ba5dbe")).sessions[0].id;
    const res = await getJson(`${core.api}/api/v1/sessions/${id}`);
    expect(res.status).toBe(200);
    const s = res.body;
    expect(s.session_events.map((e: any) => e.event_type)).toEqual([
      "cowrie.session.connect",
      "cowrie.login.failed",
      "cowrie.login.success",
      "cowrie.session.params",
      "cowrie.command.input",
      "cowrie.command.input",
      "cowrie.log.closed",
      "cowrie.session.closed",
    ]);
    expect(s.session_events.map((e: any) => e.id)).toEqual([15, 16, 17, 18, 19, 20, 21, 22]);
    expect(s.credentials).toEqual([
      { timestamp: "2026-11-22T01:07:43.226Z", username: "admin", password: "wrongpw", success: false },
      { timestamp: "2026-11-22T01:07:43.270Z", username: "root", password: "toor", success: true },
    ]);
    expect(s.command_lines).toEqual([
      { timestamp: "2026-11-22T01:07:43.377Z", input: "uname -a; whoami", found: true },
      { timestamp: "2026-11-22T01:07:43.379Z", input: "exit", found: true },
    ]);
    expect(s.file_events).toEqual([]);
    expect(s.recording_file).toBeNull();
    expect(s.truncated).toBe(false);

    // Straight from Cowrie to the event socket: no node could ever send the file.
    const rec = await getJson(`${core.api}/api/v1/sessions/${id}/recording`);
    expect(rec.status).toBe(404);
    expect(rec.body.error.message).toBe(`session ${id} was recorded, but no path for a recording exists: its events came to Core's event socket directly, with no node to send the file (relay the honeypot through a node, with --pot-dir for a Cowrie of your own)`);
    await ingest(core, [stringify({ eventid: "cowrie.log.closed", session: "withnode", ttylog: "tty/x.cast", node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", timestamp: "2026-11-22T02:00:00Z" })]);
    const withNode = (await list(core, "session=withnode")).sessions[0].id;
    expect((await getJson(`${core.api}/api/v1/sessions/${withNode}/recording`)).body.error.message).toBe(`session ${withNode} was recorded, but its node has not sent the recording (yet)`);
    expect((await getJson(`${core.api}/api/v1/sessions/999`)).status).toBe(404);
    expect((await getJson(`${core.api}/api/v1/sessions/abc`)).status).toBe(400);
  });

  test("a session across batches, segments and a Core restart stays one session", async () => {
    using dir = tempDir();
    await using kept = await keptDatabase(dir.path);
    const ev = (session: string, eventid: string, i: number, extra: Record<string, unknown> = {}) =>
      stringify({ eventid, session, src_ip: "198.51.100.9", timestamp: new Date(Date.UTC(2026, 10, 22, 2, 0, 0, i)).toISOString(), node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", ...extra });
    const noise = (n: number, from: number) => Array.from({ length: n }, (_, k) => ev(`noise${from + k}`, "cowrie.login.failed", from + k, { username: "u", password: "p" }));
    {
      await using core = await startTestCore({ ...kept.config, batch_size: 500 });
      await ingest(core, [ev("longone", "cowrie.session.connect", 0), ...noise(5000, 1), ev("longone", "cowrie.login.success", 5001, { username: "root", password: "admin" })]);
    }
    await using core = await startTestCore({ ...kept.config, batch_size: 500 });
    await ingest(core, [...noise(4000, 6000), ev("longone", "cowrie.command.input", 10_000, { input: "id" }), ev("longone", "cowrie.session.closed", 10_001)]);
    // In a cluster the restarted instance's acks are counted from zero: settled() cannot tell.
    const found = (await until(async () => {
      const l = await list(core, "session=longone");
      return l.sessions[0]?.events === 4 && l;
    }, "the session's four events")) as Awaited<ReturnType<typeof list>>;
    expect(found.sessions).toHaveLength(1);
    expect(found.sessions[0]).toMatchObject({ events: 4, login_success: true, username: "root", password: "admin", commands: 1, closed: true, node_id: BIG_ID, pot_id: "ssh-01" });
    const detail = (await getJson(`${core.api}/api/v1/sessions/${found.sessions[0].id}`)).body;
    expect(detail.session_events.map((e: any) => [e.id, e.event_type])).toEqual([
      [1, "cowrie.session.connect"],
      [5002, "cowrie.login.success"],
      [9003, "cowrie.command.input"],
      [9004, "cowrie.session.closed"],
    ]);
    // Filters without an index scan a window of rows; with an index they go straight to the match.
    expect(await sessionIds(core, "login_success=true")).toEqual(["longone"]);
    expect((await list(core, "src_ip=198.51.100.9&limit=3")).sessions).toHaveLength(3);
  });
});

describe("sessions of any honeypot kind", () => {
  test("a kind that names its events as Cowrie does gets the same session: login, commands, files, end", async () => {
    await using core = await startTestCore();
    const common = { session: "a1b2c3d4e5f6", src_ip: "198.51.100.20", src_port: 40001, dst_port: 5555, protocol: "adb", pot_id: "adb-1", pot_type: "adb" };
    const at = (s: number) => `2026-11-22T03:00:0${s}.000000Z`;
    const lines = [
      { eventid: "adb.session.connect", timestamp: at(0) },
      { eventid: "adb.login.failed", username: "shell", password: "x", timestamp: at(1) },
      { eventid: "adb.login.success", username: "shell", password: "", timestamp: at(2) },
      { eventid: "adb.command.input", input: "getprop ro.product.model", timestamp: at(3) },
      { eventid: "adb.session.file_upload", filename: "/data/local/tmp/x", shasum: "ab".repeat(32), outfile: "var/x", timestamp: at(4) },
      { eventid: "adb.session.closed", duration: 5, timestamp: at(5) },
    ].map((e) => stringify({ ...e, ...common }));
    await ingest(core, lines);
    const [row] = (await list(core, "pot_type=adb")).sessions;
    expect(row).toMatchObject({ session: "a1b2c3d4e5f6", events: 6, login_success: true, username: "shell", commands: 1, files: 1, closed: true });
    const page = (await getJson(`${core.api}/api/v1/sessions/${row.id}`)).body;
    expect([page.credentials, page.command_lines, page.file_events]).toEqual([
      [
        { timestamp: "2026-11-22T03:00:01.000Z", username: "shell", password: "x", success: false },
        { timestamp: "2026-11-22T03:00:02.000Z", username: "shell", password: "", success: true },
      ],
      [{ timestamp: "2026-11-22T03:00:03.000Z", input: "getprop ro.product.model", found: true }],
      [{ timestamp: "2026-11-22T03:00:04.000Z", event_type: "adb.session.file_upload", url: null, filename: "/data/local/tmp/x", shasum: "ab".repeat(32), outfile: "var/x" }],
    ]);
  });
});

describe("retention", () => {
  test("sessions that ended before retention_days go, with their recordings; newer ones stay", async () => {
    using dir = tempDir();
    await using kept = await keptDatabase(dir.path);
    const old = new Date(Date.now() - 10 * 86_400_000).toISOString();
    const now = new Date().toISOString();
    const ev = (session: string, timestamp: string) => stringify({ eventid: "cowrie.session.connect", session, src_ip: "198.51.100.7", timestamp, pot_type: "cowrie" });
    {
      await using core = await startTestCore(kept.config);
      using node = await registerNode(core);
      for (const [session, timestamp] of [["oldone", old], ["newone", now]]) {
        node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.log.closed", timestamp, data: { session, src_ip: "203.0.113.9" } });
        const data = Buffer.from(`{"version":2,"width":80,"height":24}\n[0.1,"o","${session}"]\n`);
        node.send("SessionRecording", { node_id: BIG_ID, pot_id: "ssh-01", session, sha256: createHash("sha256").update(data).digest("hex"), size: data.length, offset: 0, data: data.toString("base64") });
        expect(await node.nextKind("SessionRecordingAck")).toMatchObject({ session, ok: true });
      }
      await ingest(core, [ev("flatold", old)]);
      await until(async () => (await list(core)).sessions.length === 3, "three sessions");
    }
    await using core = await startTestCore({ ...kept.config, retention_days: 1 });
    await until(async () => (await list(core)).sessions.length === 1, "the old sessions deleted");
    const [left] = (await list(core)).sessions;
    expect(left.session).toBe("newone");
    expect((await getJson(`${core.api}/api/v1/sessions/${left.id}/recording`)).text).toContain('"newone"');
    expect(await recordedSessions(kept.pgUrl ?? join(dir.path, "core.db"))).toEqual([{ session: "newone" }]);
  });
});

describe("sessions from the upstream Go node's PotLog messages", () => {
  test("the sample's lines as PotLog on the control channel make the same sessions as flat lines", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    const pot = { node_id: BIG_ID, pot_id: "cowrie-lab", pot_type: "cowrie" };
    for (const line of SAMPLES) node.send("PotLog", goPotLog(JSON.parse(line), pot));
    const all = (await until(async () => {
      const s = (await list(core)).sessions;
      return s.length === 3 && s[0].events === 8 && s;
    }, "three sessions")) as any[];
    expect(all.map((s) => [s.session, s.node_id, s.events, s.login_success, s.username, s.password, s.commands, s.recording])).toEqual([
      ["4f1da0ba5dbe", BIG_ID, 8, true, "root", "toor", 2, true],
      ["3de86d0a163a", BIG_ID, 9, true, "root", "toor", 1, true],
      ["61cb4b9d22c9", BIG_ID, 5, false, null, null, 0, false],
    ]);
    const page = (await getJson(`${core.api}/api/v1/sessions/${all[0].id}`)).body;
    expect(page.command_lines.map((c: any) => c.input)).toEqual(["uname -a; whoami", "exit"]);
  });
});

describe("one session id on two honeypots", () => {
  test("is two sessions, each kept apart across batches", async () => {
    await using core = await startTestCore();
    const ev = (pot: string, eventid: string, extra: Record<string, unknown> = {}) => stringify({ eventid, session: "5eed5eed5eed", pot_id: pot, pot_type: "cowrie", src_ip: "192.0.2.8", timestamp: "2026-11-22T03:00:00Z", ...extra });
    await ingest(core, [ev("a", "cowrie.session.connect"), ev("b", "cowrie.session.connect")]);
    await ingest(core, [ev("b", "cowrie.command.input", { input: "id" }), ev("a", "cowrie.login.success", { username: "pi", password: "raspberry" })]);
    await ingest(core, [ev("a", "cowrie.session.closed")]);
    const found = (await list(core, "session=5eed5eed5eed")).sessions.map((s) => [s.pot_id, s.events, s.commands, s.login_success, s.username, s.closed]);
    expect(found).toEqual([
      ["b", 2, 1, false, null, false],
      ["a", 3, 0, true, "pi", true],
    ]);
  });
});
