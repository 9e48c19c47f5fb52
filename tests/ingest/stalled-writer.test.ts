import { sqliteEventWriting } from "../../src/db/writer-channel";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { createIngest } from "../../src/core/ingest";
import { openDatabase } from "../../src/db";
import { silentLogger } from "../../src/log";
import { Database } from "bun:sqlite";
import { startCore } from "../../src/core";
import { EventStreamClient, getJson, tempDir, until } from "../helpers";

// A writer that takes the batches and never answers fails nothing: only the time events have
// waited with no commit shows it.
test("a writer that commits nothing while events wait makes Core unhealthy after commit_stall_ms, healthy again once it commits", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), batch_size: 10, commit_stall_ms: 200, log_events: false });
  const db = openDatabase(config.db);
  const gate = Promise.withResolvers<void>();
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger(), writerGate: () => gate.promise });
  try {
    expect(ingest.problem()).toBeNull();
    for (let i = 0; i < 25; i++) expect(ingest.submit({ eventid: "stall.event", src_ip: "10.0.0.1" }, { remote: "test", transport: "events" })).toBeNull();
    const problem = await until(() => ingest.problem(), "the stalled writer to be reported", 300);
    expect(problem).toMatch(/^no events committed for [\d.]+ s while 25 events wait \(received, not committed\)$/);
    gate.resolve();
    await ingest.flush();
    expect(ingest.problem()).toBeNull();
    expect(ingest.counters).toMatchObject({ received: 25, committed: 25, pending: 0 });
  } finally {
    await ingest.stop();
    db.$client.close();
  }
});

test("a Core whose SQLite writer waits on a lock held elsewhere answers /health 503 with the reason, then 200 once it commits", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const core = await startCore({ db: path, host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, log_level: "silent", log_events: false, commit_stall_ms: 200 });
  const lock = new Database(path);
  try {
    const health = async () => getJson(`http://127.0.0.1:${core.ports.api}/health`);
    const events = await EventStreamClient.connect(core.ports.event, { acks: true });
    try {
      lock.exec("BEGIN IMMEDIATE");
      events.send([`{"eventid":"stall.event","src_ip":"10.0.0.1"}`]);
      const r = await until(async () => ((await health()).status === 503 ? health() : null), "/health to report the stalled writer", 300);
      expect(r!.body).toEqual({ status: "unhealthy", reason: expect.stringMatching(/^no events committed for [\d.]+ s while 1 events wait \(received, not committed\)$/) });
      lock.exec("ROLLBACK");
      await events.ack(1);
      expect((await health()).body).toEqual({ status: "ok" });
    } finally {
      events.socket.end();
    }
  } finally {
    lock.close();
    await core.stop();
  }
});
