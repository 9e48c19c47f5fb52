// Placeholder until the c-ingest branch lands: replaced by the JetStream channel.
import type { Logger } from "../log";
import type { WriterChannel } from "../core/ingest/writer";
import type { Bus } from "./connect";
export function ingestChannel(_bus: Bus, _log: Logger): WriterChannel {
  const no = () => Promise.reject(new Error("not built yet"));
  return { write: no, resume: async () => {}, flushCounts: async () => {}, retentionStep: async () => 0, close: async () => {} };
}
