import { expect, test } from "bun:test";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { EventPipeline } from "../../src/core/ingest/pipeline";
import type { WriterChannel } from "../../src/db/writer-channel";
import { batchData, type EventBatch } from "../../src/db/event-store";
import { silentLogger } from "../../src/log";

test("a failed write is retried and batches still commit in order, each acknowledged once", async () => {
  const committed: string[] = [];
  let next = 1;
  let failures = 1;
  let failed = false;
  // A writer with the real channel's contract: after a failure it refuses writes until resumed.
  const writer: WriterChannel = {
    write: async (b: EventBatch) => {
      if (failed) throw new Error("skipped: an earlier batch failed and must be written first");
      if (failures-- > 0) {
        failed = true;
        throw new Error("disk I/O error");
      }
      committed.push(...batchData(b).map((d) => JSON.parse(d).n));
      const first = next;
      next += b.n;
      return { firstId: first, countsPending: false };
    },
    resume: async () => {
      failed = false;
    },
    flushCounts: async () => {},
    retentionStep: async () => 0,
    close: async () => {},
  };
  const pipeline = new EventPipeline({
    config: defaultCoreConfig({ batch_size: 2, batch_delay_ms: 0 }),
    writer,
    bus: new MessageBus(),
    logger: silentLogger(),
    nodeOfPot: () => null,
    dictionaries: { sources: [], types: [] },
    retryMs: 1,
  });
  const acks: number[] = [];
  const tag = { lineNo: 0, outstanding: 0, settled: (seq: number) => acks.push(seq) };
  for (let i = 0; i < 7; i++) {
    tag.lineNo++;
    pipeline.enqueue({ node_id: null, pot_id: null, pot_type: null, event_type: "t.e", ts: 0, src_ip: null, text: JSON.stringify({ n: String(i) }), username: null, password: null }, tag);
  }
  await pipeline.flush();
  expect(committed).toEqual(["0", "1", "2", "3", "4", "5", "6"]);
  expect(acks.at(-1)).toBe(7);
  expect(acks).toEqual([...acks].sort((a, b) => a - b));
  expect(pipeline.counters).toMatchObject({ received: 7, committed: 7, pending: 0 });
  await pipeline.stop();
});

test("a live-feed subscriber who arrives while a batch fills gets every event committed after it, the whole batch", async () => {
  let next = 1;
  const writer: WriterChannel = {
    write: async (b: EventBatch) => {
      const first = next;
      next += b.n;
      return { firstId: first, countsPending: false };
    },
    resume: async () => {},
    flushCounts: async () => {},
    retentionStep: async () => 0,
    close: async () => {},
  };
  const bus = new MessageBus();
  const pipeline = new EventPipeline({
    config: defaultCoreConfig({ batch_size: 100, batch_delay_ms: 1000, log_events: false }),
    writer,
    bus,
    logger: silentLogger(),
    nodeOfPot: () => null,
    dictionaries: { sources: [], types: [] },
  });
  const event = (n: number) => ({ node_id: null, pot_id: null, pot_type: null, event_type: "t.e", ts: 0, src_ip: null, text: JSON.stringify({ n }), username: null, password: null });
  for (let i = 0; i < 3; i++) pipeline.enqueue(event(i), null);
  const got: unknown[] = [];
  bus.subscribe((m) => got.push((m.payload as { id: number; data: { n: number } }).data.n));
  for (let i = 3; i < 6; i++) pipeline.enqueue(event(i), null);
  await pipeline.flush();
  // The feed's frames are written from the committed batch's bytes, so the events enqueued
  // before the subscriber came are in them too.
  expect(got).toEqual([0, 1, 2, 3, 4, 5]);
  await pipeline.stop();
});
