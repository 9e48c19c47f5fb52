/**
 * The pipeline's writer channel (db/writer-channel.ts) on a cluster's ingest instance: a
 * sealed batch is published to the JetStream event stream (wire.ts) and counts as committed
 * once JetStream has stored every message of it, so an EventAck to a sender means "stored in
 * JetStream". A writer instance (writer-role.ts) commits it to PostgreSQL later and gives the
 * ids; here there are none (`firstId` null). Counters and retention are the writers' too.
 *
 * A publish that fails (the bus unreachable, the stream full, no PubAck in time) fails the
 * write: the pipeline retries the batch as after a failed database write, and /health says
 * why meanwhile (the pipeline's own `problem`). Each message has an id made of this instance
 * and its bytes, the same when the pipeline sends the batch again, so JetStream keeps one copy
 * of a retried publish (duplicate window). The events' keys (core/ingest/sender-keys.ts: the
 * sender and its position, never the content) make a later redelivery or a node's replay
 * harmless too, and keep two batches of identical events two messages.
 */
import type { SourceEntry, TypeEntry } from "../db/event-store";
import type { WriterChannel } from "../db/writer-channel";
import { maxPayload, type Bus } from "./connect";
import { encodeBatch, type WireDictionary } from "./wire";

export interface IngestChannelOptions {
  bus: Pick<Bus, "nc" | "js" | "names" | "instance">;
  /** The dictionaries the pipeline starts from (the same object it is given); later entries come with the batches. */
  dictionaries: { sources: SourceEntry[]; types: TypeEntry[] };
  /** Largest message body, default the server's `max_payload` less room for headers (tests cut batches small). */
  maxBytes?: number;
}

/** A message's headers count against max_payload too: the message id's header, and room to spare. */
const HEADER_ROOM = 1024;

/**
 * How long one try of a publish waits for its PubAck, and how long all tries may take. A
 * publish sent to a stream leader that dies is never answered: waiting the client's default
 * (30 s) held every ack for 30 s after one NATS server of three was killed, though the next
 * leader was elected within seconds. Sent again with the same message id, a publish the old
 * leader did store is a duplicate JetStream drops.
 */
const PUBLISH_TRY_MS = 2_000;
const PUBLISH_DEADLINE_MS = 30_000;

async function publishRetrying(bus: IngestChannelOptions["bus"], subject: string, m: Uint8Array, msgID: string): Promise<unknown> {
  const deadline = performance.now() + PUBLISH_DEADLINE_MS;
  for (;;) {
    try {
      return await bus.js.publish(subject, m, { msgID, timeout: PUBLISH_TRY_MS, retries: 3 });
    } catch (e) {
      // Only an unanswered try is tried again, or one the server could not place while JetStream
      // elects (it says "jetstream is not enabled" then); a refusal (the stream full) is final.
      const unanswered = /timeout|no responders|disconnect|closed|jetstream is not enabled/i.test((e as Error).message) && !bus.nc.isClosed();
      if (!unanswered || performance.now() > deadline) throw e;
    }
  }
}

export function ingestChannel(opts: IngestChannelOptions): WriterChannel {
  const { bus } = opts;
  const dict: WireDictionary = {
    sources: new Map(opts.dictionaries.sources.map((s) => [s.id, s])),
    types: new Map(opts.dictionaries.types.map((t) => [t.id, t])),
  };
  const subject = bus.names.ingestSubject(bus.instance);
  let failed = false;
  /** Whether the batch before the newest one was stored: a batch counts only after those before it. */
  let previous: Promise<boolean> = Promise.resolve(true);

  const publishAll = async (messages: Uint8Array[]) => {
    const acks = await Promise.all(
      messages.map((m, i) => {
        const id = `${bus.instance}.${Bun.hash.wyhash(m).toString(36)}.${i}`;
        return publishRetrying(bus, subject, m, id);
      }),
    );
    return acks.length;
  };

  return {
    idempotency: { instance: bus.instance },
    write(batch) {
      // Entries are taken when the batch is first handed over: a later batch may use them
      // while this one is still retried.
      for (const s of batch.newSources) dict.sources.set(s.id, s);
      for (const t of batch.newTypes) dict.types.set(t.id, t);
      if (failed) return Promise.reject(new Error("skipped: an earlier batch failed and must be written first"));
      let published: Promise<number>;
      try {
        // The message id header and the columns' alignment count towards max_payload too.
        const maxBytes = opts.maxBytes ?? maxPayload(bus.nc) - HEADER_ROOM;
        if (!batch.keys) throw new Error("a batch without idempotency keys: the pipeline must be given this channel's `idempotency`");
        published = publishAll(encodeBatch(batch, batch.keys, dict, maxBytes));
      } catch (e) {
        published = Promise.reject(e);
      }
      const before = previous;
      // Batches publish side by side, but a batch counts as stored only once the ones before
      // it are: the pipeline acknowledges senders in order.
      const result = (async () => {
        try {
          await published;
        } catch (e) {
          failed = true;
          throw new Error(`publishing events to the bus fails: ${(e as Error).message}`);
        }
        if (!(await before) || failed) throw new Error("skipped: an earlier batch failed and must be written first");
        return { firstId: null, countsPending: false };
      })();
      previous = result.then(
        () => true,
        () => false,
      );
      return result;
    },
    resume: async () => {
      // Let every write under way finish first: a late success must not count after the reset.
      await previous;
      failed = false;
      previous = Promise.resolve(true);
    },
    flushCounts: async () => {},
    retentionStep: async () => 0,
    close: async () => {
      await previous;
    },
  };
}
