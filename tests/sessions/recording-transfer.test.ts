import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RecordingShipper } from "../../src/node/recordings";
import { createLogger, silentLogger } from "../../src/log";
import { RECORDING_CHUNK_BYTES, type SessionRecording } from "../../src/protocol/messages";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir, until, type TestCore } from "../helpers";

const MIB = 1024 * 1024;
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

describe("recordings under way on all connections", () => {
  test("are bounded in bytes: the one over is deferred with retry_after_ms, its other chunks get no answer, and it is taken once another finishes", async () => {
    const lines: any[] = [];
    const logger = createLogger("warn", { destination: { write: (s: string) => void lines.push(...s.split("\n").filter(Boolean).map((l) => JSON.parse(l))) } });
    await using core = await startTestCore({ max_unfinished_recording_bytes: 4 * MIB }, logger);
    const data = Buffer.alloc(MIB, "recording ");
    const rec = (session: string) => {
      const base = { pot_id: "ssh-01", session, sha256: sha(data), size: data.length };
      const out: SessionRecording[] = [];
      for (let offset = 0; offset < data.length; offset += RECORDING_CHUNK_BYTES) out.push({ ...base, node_id: 0n, offset, data: data.subarray(offset, offset + RECORDING_CHUNK_BYTES).toString("base64") });
      return (nodeId: bigint) => out.map((c) => ({ ...c, node_id: nodeId }));
    };
    // Core answers a connection's messages in order: an answer to a bad one means those before it were taken.
    const taken = async (node: Awaited<ReturnType<typeof registerNode>>) => {
      node.send("NoSuchMessage", {});
      expect((await node.nextKind("Error")).code).toBe("unknown_kind");
    };
    const nodes = await Promise.all([1n, 2n, 3n, 4n, 5n].map((id) => registerNode(core, id, `sensor-${id}`)));
    try {
      const [first, , , , fifth] = nodes as [typeof nodes[0], typeof nodes[0], typeof nodes[0], typeof nodes[0], typeof nodes[0]];
      // Four connections each begin a recording of 1 MiB: 4 MiB held, the bound.
      for (const [i, node] of nodes.slice(0, 4).entries()) {
        node.send("SessionRecording", rec(`s${i + 1}`)(BigInt(i + 1))[0]);
        await taken(node);
      }
      for (const c of rec("s5")(5n)) fifth.send("SessionRecording", c);
      await taken(fifth);
      expect(await fifth.nextKind("SessionRecordingAck")).toEqual({
        pot_id: "ssh-01",
        session: "s5",
        ok: false,
        retry_after_ms: 5000,
        message: `busy: Core holds ${4 * MIB} bytes of unfinished recordings and takes at most ${4 * MIB} (max_unfinished_recording_bytes); this one's ${MIB} bytes would pass it; send it again from offset 0 in 5000 ms`,
      });
      await until(() => lines.find((l) => l.msg.startsWith("session recording deferred: busy")), "the log line");
      expect(lines.find((l) => l.msg.startsWith("session recording deferred"))).toMatchObject({ level: 40, node_id: "5", pot_id: "ssh-01", session: "s5", retry_after_ms: 5000 });

      // The first finishes: its bytes are no longer held, and the fifth, sent again, is taken.
      for (const c of rec("s1")(1n).slice(1)) first.send("SessionRecording", c);
      expect(await first.nextKind("SessionRecordingAck")).toEqual({ pot_id: "ssh-01", session: "s1", ok: true, message: `stored ${MIB} bytes` });
      for (const c of rec("s5")(5n)) fifth.send("SessionRecording", c);
      expect(await fifth.nextKind("SessionRecordingAck")).toEqual({ pot_id: "ssh-01", session: "s5", ok: true, message: `stored ${MIB} bytes` });

      // A connection that closes gives its recording's bytes back too.
      nodes[1]!.close();
      await nodes[1]!.closed;
      const sixth = await registerNode(core, 6n, "sensor-6");
      nodes.push(sixth);
      for (const c of rec("s6")(6n)) sixth.send("SessionRecording", c);
      expect(await sixth.nextKind("SessionRecordingAck")).toMatchObject({ session: "s6", ok: true });
    } finally {
      for (const n of nodes) n.close();
    }
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

  test("keeps a recording Core deferred and sends it again after the wait Core named", async () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, "ssh-01", "tty"), { recursive: true });
    const data = cast(10);
    writeFileSync(join(dir.path, "ssh-01", "tty", "rec.cast"), data);
    const sent: SessionRecording[] = [];
    let resent = Promise.withResolvers<void>();
    const shipper = new RecordingShipper({
      nodeId: BIG_ID,
      potDir: (p) => join(dir.path, p),
      queueFile: join(dir.path, "queue.json"),
      send: (_kind, payload) => {
        sent.push(payload);
        resent.resolve();
        return true;
      },
      logger: silentLogger(),
    });
    try {
      shipper.registered();
      shipper.onEvent("ssh-01", { eventid: "cowrie.log.closed", session: "s1", ttylog: "tty/rec.cast" });
      expect(sent).toHaveLength(1);
      resent = Promise.withResolvers<void>();
      shipper.onAck({ pot_id: "ssh-01", session: "s1", ok: false, retry_after_ms: 150, message: "busy" });
      expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([{ pot_id: "ssh-01", session: "s1", ttylog: "tty/rec.cast" }]);
      expect(sent).toHaveLength(1);
      await resent.promise;
      expect(sent).toEqual([sent[0]!, sent[0]!]);
      shipper.onAck({ pot_id: "ssh-01", session: "s1", ok: true, message: "stored" });
      expect(JSON.parse(readFileSync(join(dir.path, "queue.json"), "utf8"))).toEqual([]);
    } finally {
      shipper.stop();
    }
  });
});
