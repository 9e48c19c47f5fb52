import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RecordingShipper } from "../../src/node/recordings";
import { silentLogger } from "../../src/log";
import { RECORDING_CHUNK_BYTES, type SessionRecording } from "../../src/protocol/messages";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir, until, type TestCore } from "../helpers";

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
const cast = (n: number) => Buffer.from(`{"version":2,"width":80,"height":24}\n${Array.from({ length: n }, (_, i) => `[${i / 10},"o","line ${i} ${"x".repeat(60)}\\r\\n"]`).join("\n")}\n`);

/** A session on Core for node BIG_ID, pot ssh-01, and its id. */
async function sessionOn(core: TestCore, node: Awaited<ReturnType<typeof registerNode>>, session: string): Promise<number> {
  node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.log.closed", timestamp: "2026-11-22T01:00:00Z", data: { session, src_ip: "203.0.113.9" } });
  return until(async () => (await getJson(`${core.api}/api/v1/sessions?session=${session}`)).body.sessions[0]?.id, "the session");
}

describe("SessionRecording on the control channel", () => {
  test("chunks in order are stored and served; a gap, a wrong hash, a missing start and a cut connection are refused", async () => {
    await using core = await startTestCore();
    const data = cast(6000); // several chunks
    expect(data.length).toBeGreaterThan(2 * RECORDING_CHUNK_BYTES);
    const base = { node_id: BIG_ID, pot_id: "ssh-01", session: "aa11bb22cc33", sha256: sha(data), size: data.length };
    const chunks = (rec: typeof base, bytes: Buffer) => {
      const out: SessionRecording[] = [];
      for (let offset = 0; offset < bytes.length; offset += RECORDING_CHUNK_BYTES) out.push({ ...rec, offset, data: bytes.subarray(offset, offset + RECORDING_CHUNK_BYTES).toString("base64") });
      return out;
    };
    {
      using node = await registerNode(core);
      const id = await sessionOn(core, node, base.session);
      for (const c of chunks(base, data)) node.send("SessionRecording", c);
      expect(await node.nextKind("SessionRecordingAck")).toEqual({ pot_id: "ssh-01", session: base.session, ok: true, message: `stored ${data.length} bytes` });
      const res = await fetch(`${core.api}/api/v1/sessions/${id}/recording`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-asciicast");
      expect(Buffer.from(await res.arrayBuffer())).toEqual(data);

      const [first, second, third] = chunks({ ...base, session: "gap" }, data);
      node.send("SessionRecording", first);
      node.send("SessionRecording", third);
      expect(await node.nextKind("SessionRecordingAck")).toMatchObject({ session: "gap", ok: false, message: expect.stringContaining(`does not follow the ${RECORDING_CHUNK_BYTES} bytes received`) });
      node.send("SessionRecording", second);
      expect(await node.nextKind("SessionRecordingAck")).toMatchObject({ session: "gap", ok: false, message: expect.stringContaining("whose start was not received") });

      for (const c of chunks({ ...base, session: "badhash", sha256: "0".repeat(64) }, data)) node.send("SessionRecording", c);
      expect(await node.nextKind("SessionRecordingAck")).toMatchObject({ session: "badhash", ok: false, message: expect.stringContaining(`not ${"0".repeat(64)} as announced`) });

      // Beyond the limit: refused by the schema, as an Error.
      node.send("SessionRecording", { ...base, size: 5 * 1024 * 1024, offset: 0, data: "AA==" });
      expect(await node.nextKind("Error")).toMatchObject({ code: "invalid_payload", message: expect.stringContaining("SessionRecording") });

      // Cut mid-transfer: the next connection cannot go on where it stopped.
      node.send("SessionRecording", chunks({ ...base, session: "cut" }, data)[0]!);
    }
    using again = await registerNode(core);
    again.send("SessionRecording", chunks({ ...base, session: "cut" }, data)[1]!);
    expect(await again.nextKind("SessionRecordingAck")).toMatchObject({ session: "cut", ok: false, message: expect.stringContaining("send it again from offset 0") });
  });
});

describe("the node's recording queue", () => {
  test("sends a pot's recording after registering, survives a restart of the node, and refuses files outside the pot's folder", () => {
    using dir = tempDir();
    const pots = join(dir.path, "pots");
    mkdirSync(join(pots, "ssh-01", "tty"), { recursive: true });
    const data = cast(10);
    writeFileSync(join(pots, "ssh-01", "tty", "rec.cast"), data);
    writeFileSync(join(dir.path, "secret"), "not the pot's");
    symlinkSync(join(dir.path, "secret"), join(pots, "ssh-01", "tty", "link.cast"));
    const sent: SessionRecording[] = [];
    let registered = false;
    const shipper = () =>
      new RecordingShipper({
        nodeId: BIG_ID,
        potDir: (p) => join(pots, p),
        queueFile: join(dir.path, "queue.json"),
        send: (_kind, payload) => registered && sent.push(payload) > 0,
        logger: silentLogger(),
      });
    const closed = (session: string, ttylog: string) => ({ eventid: "cowrie.log.closed", session, ttylog });

    const before = shipper();
    before.onEvent("ssh-01", closed("s1", "tty/rec.cast"));
    expect(sent).toEqual([]);
    before.stop();
    expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([{ pot_id: "ssh-01", session: "s1", ttylog: "tty/rec.cast" }]);

    // The node restarts and registers: the queued recording goes.
    const after = shipper();
    registered = true;
    after.registered();
    expect(sent).toEqual([{ node_id: BIG_ID, pot_id: "ssh-01", session: "s1", sha256: sha(data), size: data.length, offset: 0, data: data.toString("base64") }]);
    // Not acknowledged yet: a re-registration sends it again.
    after.registered();
    expect(sent).toHaveLength(2);
    after.onAck({ pot_id: "ssh-01", session: "s1", ok: true, message: "stored" });
    expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([]);

    for (const ttylog of ["../../secret", join(dir.path, "secret"), "tty/link.cast", "tty/missing.cast"]) after.onEvent("ssh-01", closed("s2", ttylog));
    expect(sent).toHaveLength(2);
    expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([]);
    after.stop();
  });
});
