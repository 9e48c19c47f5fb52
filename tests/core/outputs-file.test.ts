import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileSink, rotatedFiles } from "../../src/modules/outputs/file";
import type { OutEvent } from "../../src/modules/outputs/event";
import { toEcs } from "../../src/modules/outputs/format/ecs";
import { stringify } from "../../src/protocol/json";
import { getJson, startTestCore, tempDir } from "../helpers";
import { failedAtLeast, numbered, outputStatus, sendEvents, waitFor } from "../helpers/outputs";

const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const event = (id: number, ts = Date.parse("2026-11-23T04:00:00Z")): OutEvent => ({
  id,
  ts,
  node_id: 7n,
  pot_id: "ssh-01",
  pot_type: "cowrie",
  event_type: "cowrie.login.success",
  src_ip: "203.0.113.7",
  data: { username: "root", password: "123456", session: "abc", protocol: "ssh", src_port: 40022, message: "login attempt [root/123456] succeeded" },
});

describe("file output", () => {
  test("NDJSON in ECS field names; a folder that cannot be written for a while loses nothing", async () => {
    using dir = tempDir();
    const blocker = join(dir.path, "ecs");
    writeFileSync(blocker, "not a folder");
    const path = join(blocker, "events.ndjson");
    await using core = await startTestCore({ outputs: [{ name: "ecs", type: "file", path, retry: { min_backoff_ms: 20, max_backoff_ms: 100 } }] });
    await sendEvents(core, numbered(1, 6, { eventid: "cowrie.login.success", username: "root", password: "123456", src_port: 40022, dst_port: 2222 }));
    await failedAtLeast(core, "ecs", 2);
    rmSync(blocker);
    mkdirSync(blocker);
    await waitFor(async () => (await outputStatus(core, "ecs")).lag === 0, "the file written");
    const got = lines(path);
    expect(got.map((l) => l.honeybee.data.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    const { "@timestamp": ts, ...first } = got[0];
    expect(Date.parse(ts)).toBeGreaterThan(0);
    expect(first).toMatchObject({
      ecs: { version: "8.11.0" },
      event: { kind: "event", category: ["authentication"], type: ["start"], outcome: "success", action: "cowrie.login.success", dataset: "honeybee.cowrie", module: "cowrie" },
      source: { ip: "203.0.113.7", port: 40022 },
      destination: { port: 2222 },
      user: { name: "root" },
      related: { user: ["root"], ip: ["203.0.113.7"] },
      observer: { type: "honeypot", vendor: "HoneyBee", product: "cowrie", name: "ssh-01" },
      labels: { pot_id: "ssh-01" },
      honeybee: { password: "123456" },
    });
  });

  test("rotates by size and by age, keeping max_files", async () => {
    using dir = tempDir();
    const path = join(dir.path, "events.ndjson");
    let now = Date.parse("2026-11-23T04:00:00Z");
    // Room for two lines and a half.
    const lineBytes = Buffer.byteLength(`${stringify(toEcs(event(1)))}\n`);
    const sink = fileSink({ name: "f", type: "file", path, max_bytes: Math.floor(lineBytes * 2.5), max_age_ms: 60_000, max_files: 2 }, () => now);
    try {
      await sink.send([event(1), event(2)]);
      expect(readdirSync(dir.path)).toEqual(["events.ndjson"]);
      // By size: a third line would not fit.
      await sink.send([event(3)]);
      expect(rotatedFiles(path).map((f) => lines(f).map((l) => l.honeybee.event_id))).toEqual([[1, 2]]);
      expect(lines(path).map((l) => l.honeybee.event_id)).toEqual([3]);
      // By age.
      now += 60_000;
      await sink.send([event(4)]);
      now += 1;
      await sink.send([event(5)]);
      now += 60_000;
      await sink.send([event(6)]);
      // Three rotations happened, two rotated files are kept: the oldest ([1, 2]) is gone.
      expect(rotatedFiles(path).map((f) => lines(f).map((l) => l.honeybee.event_id))).toEqual([[3], [4, 5]]);
      expect(lines(path).map((l) => l.honeybee.event_id)).toEqual([6]);
      expect(rotatedFiles(path).map((f) => f.slice(dir.path.length + 1))).toEqual(["events-20261123T040100000Z.ndjson", "events-20261123T040200001Z.ndjson"]);
    } finally {
      await sink.close();
    }
  });
});

test("an output working through a backlog leaves Core answering meanwhile", async () => {
  using dir = tempDir();
  await using core = await startTestCore({ batch_size: 4096 });
  await sendEvents(core, numbered(1, 20_000));
  const added = await getJson(`${core.api}/api/v1/outputs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "ecs", type: "file", path: join(dir.path, "backlog.ndjson"), from: "earliest", batch_size: 1000 }),
  });
  expect(added.status).toBe(201);
  // The answer came while the output was still catching up: it yields between reads.
  expect((await getJson(`${core.api}/health`)).status).toBe(200);
  expect(core.outputs.stats()[0]!.lag).toBeGreaterThan(0);
  await waitFor(() => core.outputs.stats()[0]!.lag === 0, "the backlog shipped");
  expect(lines(join(dir.path, "backlog.ndjson"))).toHaveLength(20_000);
});
