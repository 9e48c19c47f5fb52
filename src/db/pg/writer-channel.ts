/**
 * The event writer channel (writer.ts) on PostgreSQL: the writer runs on this thread with a
 * connection of its own. No worker thread is needed: the server does the storing, and what
 * is left here (the COPY text, the segment summaries) is a small part of a batch's cost.
 * Requests run one at a time in the order sent, with the same rule after a failed write.
 */
import { pgClient } from "./index";
import { PgEventWriter, type PgBatchPart, type PgWriteMode } from "./event-writer";
import type { WriteResult, WriterChannel } from "../writer-channel";

/** `parts`: what else each batch adds (PgBatchPart), written in its transaction. */
export function pgWriter(url: string, mode: PgWriteMode = "copy", parts: PgBatchPart[] = []): WriterChannel {
  const client = pgClient(url, 1);
  // Opened again by the next request when it failed (the server was away as Core started, or
  // stopped while the writer loaded): a rejected open kept forever failed every later write.
  let opened: Promise<PgEventWriter> | null = null;
  const open = () =>
    (opened ??= PgEventWriter.open(client, mode, parts).catch((e) => {
      opened = null;
      throw e;
    }));
  open().catch(() => {});
  let failed = false;
  let chain: Promise<unknown> = Promise.resolve();
  const call = <T>(run: (w: PgEventWriter) => Promise<T>) => {
    const p = chain.then(open).then(run);
    chain = p.catch(() => {});
    return p;
  };
  return {
    write: (batch) =>
      call<WriteResult>(async (w) => {
        if (failed) throw new Error("skipped: an earlier batch failed and must be written first");
        try {
          return { firstId: await w.write(batch), countsPending: w.countsPending };
        } catch (e) {
          failed = true;
          throw e;
        }
      }),
    // Needs no server: a resume that failed while it is away would leave every later write skipped.
    resume: () => {
      const p = chain.then(() => {
        failed = false;
      });
      chain = p;
      return p;
    },
    flushCounts: () => call(async (w) => void (w.countsPending && (await w.flushCounts()))),
    retentionStep: (cutoffMs, maxRows) => call((w) => w.retentionStep(cutoffMs, maxRows)),
    close: async () => {
      try {
        // A writer that never opened has no counters to write; closing must not wait for the server.
        const done = chain.then(async () => {
          const w = await opened?.catch(() => null);
          if (w?.countsPending) await w.flushCounts();
        });
        chain = done.catch(() => {});
        await done;
      } finally {
        await client.close();
      }
    },
  };
}
