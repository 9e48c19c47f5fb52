/**
 * Terminal recordings in a cluster (docs/scale-out.md): two instances on one PostgreSQL
 * database and the machine's NATS. A node sends a session's recording to instance A; instance
 * B serves it with the session.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { RECORDING_CHUNK_BYTES } from "../../src/protocol/messages";
import { BIG_ID, getJson, registerNode, startTestCore, until } from "../helpers";
import { clusterName, dropCluster, NATS_URL, sharedDatabase } from "./helpers";

const CAST = Buffer.from(`{"version":2,"width":80,"height":24}\n${Array.from({ length: 6000 }, (_, i) => `[${i / 10},"o","line ${i} ${"x".repeat(40)}\\r\\n"]`).join("\n")}\n`);

test("a recording a node sends to instance A is served by instance B", async () => {
  const db = await sharedDatabase();
  const cluster = clusterName();
  try {
    const config = { db: db.url, bus: NATS_URL, cluster };
    await using a = await startTestCore(config);
    await using b = await startTestCore(config);
    using node = await registerNode(a);
    const session = "5e55105ab0b0";
    node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.log.closed", timestamp: new Date().toISOString(), data: { session, src_ip: "203.0.113.9" } });
    const id = await until(async () => (await getJson(`${b.api}/api/v1/sessions?session=${session}`)).body.sessions?.[0]?.id, "the session on B");
    const sha256 = createHash("sha256").update(CAST).digest("hex");
    expect(CAST.length).toBeGreaterThan(RECORDING_CHUNK_BYTES);
    for (let offset = 0; offset < CAST.length; offset += RECORDING_CHUNK_BYTES) {
      node.send("SessionRecording", { node_id: BIG_ID, pot_id: "ssh-01", session, sha256, size: CAST.length, offset, data: CAST.subarray(offset, offset + RECORDING_CHUNK_BYTES).toString("base64") });
    }
    expect(await node.nextKind("SessionRecordingAck")).toEqual({ pot_id: "ssh-01", session, ok: true, message: `stored ${CAST.length} bytes` });
    const res = await fetch(`${b.api}/api/v1/sessions/${id}/recording`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(CAST);
    expect((await getJson(`${b.api}/api/v1/sessions/${id}`)).body.recording_file).toEqual({ size: CAST.length, sha256, received: expect.any(String) });
  } finally {
    await dropCluster(cluster).catch(() => {});
    await db.drop();
  }
});
