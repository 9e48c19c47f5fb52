/**
 * Real Cowrie's recordings through a node that relays for it: Cowrie (not installed by the
 * node) sends its HoneyBee output to the node's relay, its ttylogs lie in the directory given
 * by `pot_dir`, and the node ships each one to Core as asciicast.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseCast } from "../../src/cli/replay";
import { startNode } from "../../src/node/agent";
import { RecordingShipper } from "../../src/node/recordings";
import { silentLogger } from "../../src/log";
import { MAX_RECORDING_BYTES, type SessionRecording } from "../../src/protocol/messages";
import { BIG_ID, getJson, LineClient, startTestCore, tempDir, until } from "../helpers";
import { DIRECTION, OP, SESSION_CAST_LINES, sessionTtylog, T0, ttyRecord } from "./ttylog-bytes";

const SAMPLES = readFileSync(join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl"), "utf8").trim().split("\n");

/** The sample's lines of one session, its cowrie.log.closed naming `ttylog` instead. */
function sessionLines(session: string, ttylog: { path: string; size: number; shasum: string; duplicate: boolean }): string[] {
  const lines = SAMPLES.filter((l) => JSON.parse(l).session === session);
  return lines.map((l) => {
    const e = JSON.parse(l);
    if (e.eventid !== "cowrie.log.closed") return l;
    return JSON.stringify({ ...e, ttylog: ttylog.path, size: ttylog.size, shasum: ttylog.shasum, duplicate: ttylog.duplicate, message: `Closing TTY Log: ${ttylog.path} after 0.0 seconds` });
  });
}

test("Cowrie's ttylog of a pot the node relays for plays from Core as asciicast, a duplicate too", async () => {
  using dir = tempDir();
  await using core = await startTestCore();
  const cowrie = join(dir.path, "cowrie");
  const bytes = sessionTtylog();
  const shasum = createHash("sha256").update(bytes).digest("hex");
  mkdirSync(join(cowrie, "var", "lib", "cowrie", "tty"), { recursive: true });
  writeFileSync(join(cowrie, "var", "lib", "cowrie", "tty", shasum), bytes);
  const node = await startNode(
    {
      core: `127.0.0.1:${core.ports.node}`,
      events: `127.0.0.1:${core.ports.event}`,
      data: join(dir.path, "node"),
      name: "sensor",
      relay_port: 0,
      log_level: "silent",
      heartbeat_ms: 200,
      reconnect_min_ms: 10,
      reconnect_max_ms: 200,
      pot_dir: [`cowrie-lab=${cowrie}`],
    },
    silentLogger(),
  );
  try {
    await until(() => core.registry.link(node.nodeId), "the node's registration");
    const ttylog = { path: `var/lib/cowrie/tty/${shasum}`, size: bytes.length, shasum };
    // Cowrie's socket output: its lines as they are, no hello; the Telnet session's log is
    // the same bytes, so Cowrie keeps one file and says `duplicate`.
    using cowrieOutput = await LineClient.connect(node.ports.relay);
    cowrieOutput.sendRaw(`${[...sessionLines("3de86d0a163a", { ...ttylog, duplicate: false }), ...sessionLines("4f1da0ba5dbe", { ...ttylog, duplicate: true })].join("\n")}\n`);

    for (const session of ["3de86d0a163a", "4f1da0ba5dbe"]) {
      const listed = await until(async () => {
        const s = (await getJson(`${core.api}/api/v1/sessions?session=${session}`)).body.sessions[0];
        return s?.recording && (await getJson(`${core.api}/api/v1/sessions/${s.id}`)).body.recording_file && s;
      }, `the recording of ${session} at Core`);
      expect(listed).toMatchObject({ node_id: node.nodeId, pot_id: "cowrie-lab", pot_type: "cowrie", recording: true });
      const res = await fetch(`${core.api}/api/v1/sessions/${listed.id}/recording`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-asciicast");
      expect(await res.text()).toBe(`${SESSION_CAST_LINES.join("\n")}\n`);
    }
  } finally {
    await node.stop();
  }
});

test("the node reads a relayed pot's tty logs only inside its folder, converts them, and skips what is not a recording", () => {
  using dir = tempDir();
  const cowrie = join(dir.path, "cowrie");
  const tty = join(cowrie, "var", "lib", "cowrie", "tty");
  mkdirSync(tty, { recursive: true });
  writeFileSync(join(tty, "session"), sessionTtylog());
  writeFileSync(join(tty, "garbage"), "GIF89a not a recording at all");
  writeFileSync(join(tty, "cut"), sessionTtylog().subarray(0, 70));
  // Cowrie writes output in small pieces: 5 MiB of them make a cast over Core's limit.
  writeFileSync(join(tty, "long"), Buffer.concat([ttyRecord(OP.open, 0, T0, 0), ...Array.from({ length: 100 }, (_, i) => ttyRecord(OP.write, DIRECTION.output, T0 + i, 0, "y".repeat(52_000)))]));
  writeFileSync(join(dir.path, "secret"), sessionTtylog());
  symlinkSync(join(dir.path, "secret"), join(tty, "link"));
  const sent: SessionRecording[] = [];
  const shipper = new RecordingShipper({
    nodeId: BIG_ID,
    potDir: (p) => (p === "cowrie-lab" ? cowrie : null),
    queueFile: join(dir.path, "queue.json"),
    send: (_kind, payload) => sent.push(payload) > 0,
    logger: silentLogger(),
  });
  const closed = (session: string, ttylog: string, potId = "cowrie-lab") => {
    shipper.onEvent(potId, { eventid: "cowrie.log.closed", session, ttylog });
    const last = sent.at(-1);
    if (last?.session === session) shipper.onAck({ pot_id: potId, session, ok: true, message: "stored" });
    return sent.filter((r) => r.session === session);
  };
  const cast = (rs: SessionRecording[]) => Buffer.concat(rs.map((r) => Buffer.from(r.data, "base64"))).toString();

  expect(cast(closed("rel", "var/lib/cowrie/tty/session"))).toBe(`${SESSION_CAST_LINES.join("\n")}\n`);
  expect(cast(closed("abs", join(tty, "session")))).toBe(`${SESSION_CAST_LINES.join("\n")}\n`);
  const long = closed("long", "var/lib/cowrie/tty/long");
  expect(long[0]!.size).toBeLessThanOrEqual(MAX_RECORDING_BYTES);
  expect(parseCast(cast(long)).output.length).toBeGreaterThan(50);
  for (const [session, ttylog] of [
    ["outside", join(dir.path, "secret")],
    ["up", "../../../../secret"],
    ["link", "var/lib/cowrie/tty/link"],
    ["garbage", "var/lib/cowrie/tty/garbage"],
    ["cut", "var/lib/cowrie/tty/cut"],
    ["missing", "var/lib/cowrie/tty/missing"],
    ["folder", "var/lib/cowrie/tty"],
  ]) {
    expect({ session, sent: closed(session!, ttylog!) }).toEqual({ session, sent: [] });
  }
  // A pot the node neither installed nor relays for is not even queued.
  expect(closed("elsewhere", "var/lib/cowrie/tty/session", "cowrie-other")).toEqual([]);
  expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([]);
  // Still working after all that: the next one goes.
  expect(closed("after", "var/lib/cowrie/tty/session")).toHaveLength(1);
  shipper.stop();
});
