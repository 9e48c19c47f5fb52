import { expect, test } from "bun:test";
import { join } from "node:path";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { createIngest, startEventSocket } from "../../src/core/ingest";
import { openDatabase } from "../../src/db";
import { EventQueries } from "../../src/db/event-store";
import { silentLogger } from "../../src/log";
import { EventStreamClient, tempDir, until } from "../helpers";

// The pipeline as startCore wires it (real SQLite file, writer thread, event socket), with the
// test-only gate that stalls the writer.
test("a stalled writer pauses reading: pending events stay bounded with many fast producers, and nothing is lost", async () => {
  using dir = tempDir();
  const config = defaultCoreConfig({ db: join(dir.path, "events.db"), max_pending_events: 1000, batch_size: 200, log_events: false });
  const db = openDatabase(config.db);
  const gate = Promise.withResolvers<void>();
  const overloaded = Promise.withResolvers<void>();
  const ingest = createIngest({ db, config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger(), writerGate: () => gate.promise });
  ingest.onPressure((on) => on && overloaded.resolve());
  const socket = startEventSocket({ host: "127.0.0.1", port: 0, ingest, config, logger: silentLogger() });
  try {
    // Enough per producer that loopback's socket buffers cannot hold it all: each must block.
    const PRODUCERS = 4;
    const PER = 6000;
    const pad = "p".repeat(1500);
    const producers = await Promise.all(Array.from({ length: PRODUCERS }, () => EventStreamClient.connect(socket.port, { acks: true })));
    producers.forEach((p, k) => void p.send(Array.from({ length: PER }, (_, i) => `{"eventid":"bp.event","src_ip":"10.0.${k}.${i % 250}","pad":"${pad}"}`)));

    await overloaded.promise;
    await until(() => producers.every((p) => p.blocked), "every producer blocked by TCP backpressure");
    // Bounded: the limit plus what the chunks being parsed when reading paused carried.
    const slack = PRODUCERS * Math.ceil((256 * 1024) / 1500);
    expect(ingest.counters.pending).toBeGreaterThanOrEqual(1000);
    expect(ingest.counters.pending).toBeLessThanOrEqual(1000 + slack);
    expect(ingest.counters.committed).toBe(0);

    gate.resolve();
    await Promise.all(producers.map((p) => p.ack(PER)));
    expect(ingest.counters).toMatchObject({ received: PRODUCERS * PER, committed: PRODUCERS * PER, rejected: 0, pending: 0 });
    expect(new EventQueries(db).stats(86_400_000, 1).totalEvents).toBe(PRODUCERS * PER);
    for (const p of producers) p.close();
  } finally {
    await socket.stop();
    await ingest.stop();
    db.$client.close();
  }
});
