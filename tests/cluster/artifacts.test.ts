/**
 * Artifacts in a cluster (docs/scale-out.md): two instances on one PostgreSQL database and the
 * machine's NATS. A node sends a file to instance A; instance B lists it and serves its
 * download, the bytes read from artifact_chunks; the same file offered to B later is complete
 * there at once.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir } from "../helpers";
import { requireTool } from "../helpers/clients";
import { clusterName, dropCluster, NATS_URL, sharedDatabase } from "./helpers";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
/** Three chunk rows and a bit (ARTIFACT_CHUNK_BYTES is 256 KiB). */
const BYTES = Buffer.from(Array.from({ length: 3 * 256 * 1024 + 1000 }, (_, i) => (i * 31 + 7) % 251));
const PIECE = 60 * 1024;

test("a file a node sends to instance A is listed and downloaded from instance B", async () => {
  using dir = tempDir();
  const db = await sharedDatabase();
  const cluster = clusterName();
  try {
    const config = { db: db.url, bus: NATS_URL, cluster };
    await using a = await startTestCore({ ...config, artifacts_dir: join(dir.path, "a") });
    await using b = await startTestCore({ ...config, artifacts_dir: join(dir.path, "b") });
    const hash = sha(BYTES);
    const offer = (sighting_id: string) => ({ sha256: hash, size: BYTES.length, kind: "artifact", sighting_id, meta: { source: "cowrie.session.file_download", session: "c0ffee000001", url: "http://203.0.113.5/x86", filename: "x86" } });
    {
      using node = await registerNode(a);
      node.send("FileOffer", offer("s1"));
      expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 0, complete: false });
      let status: any;
      for (let at = 0; at < BYTES.length; at += PIECE) {
        node.send("FileChunk", { sha256: hash, offset: at, data: BYTES.subarray(at, at + PIECE).toString("base64") });
        status = await node.nextKind("FileStatus");
      }
      expect(status).toEqual({ sha256: hash, offset: BYTES.length, complete: true });
    }

    const listed = (await getJson(`${b.api}/api/v1/artifacts`)).body;
    expect(listed.artifacts.map((x: any) => [x.sha256, x.size, x.stored, x.urls, x.sessions])).toEqual([[hash, BYTES.length, true, ["http://203.0.113.5/x86"], ["c0ffee000001"]]]);
    const res = await fetch(`${b.api}/api/v1/artifacts/${hash}/download`);
    expect(res.status).toBe(200);
    const zipPath = join(dir.path, "x86.zip");
    writeFileSync(zipPath, Buffer.from(await res.arrayBuffer()));
    const unzipped = Bun.spawnSync([requireTool("unzip"), "-P", "infected", "-p", zipPath]);
    expect(unzipped.exitCode).toBe(0);
    expect(sha(unzipped.stdout)).toBe(hash);

    // The node, failed over to B, offers it again: B holds it already and records the sighting.
    using node = await registerNode(b);
    node.send("FileOffer", offer("s2"));
    expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: BYTES.length, complete: true });
    const one = (await getJson(`${a.api}/api/v1/artifacts/${hash}`)).body;
    expect(one.sightings.map((s: any) => [s.node_id, s.session])).toEqual([
      [BIG_ID, "c0ffee000001"],
      [BIG_ID, "c0ffee000001"],
    ]);
  } finally {
    await dropCluster(cluster).catch(() => {});
    await db.drop();
  }
});
