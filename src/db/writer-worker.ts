/**
 * The event writer's thread: owns one SQLite connection and answers the pipeline's requests
 * in order (see writer.ts).
 */
import { openDatabase, type Db } from "./index";
import { EventWriter } from "./event-writer";
import { geoResolver, WriterHost, type WriterRequest } from "./writer-channel";

declare const self: Worker;

/** A write's data goes back to the pipeline, which uses the buffer again (writer.ts). */
const dataOf = (req: WriterRequest) => (req.op === "write" ? req.batch.data : undefined);
const transferOf = (req: WriterRequest) => (req.op === "write" ? [req.batch.data] : []);

let db: Db | null = null;
let host: WriterHost | null = null;

self.onmessage = (e: MessageEvent<{ rid: number; req: WriterRequest }>) => {
  const { rid, req } = e.data;
  try {
    let value: unknown = null;
    if (req.op === "open") {
      // Migrations already ran on the main thread; this only finds them applied.
      db = openDatabase(req.path);
      // The checkpointer thread copies the log into the database (see checkpointer.ts).
      if (!req.autoCheckpoint) db.$client.exec("PRAGMA wal_autocheckpoint = 0");
      // Appending touches few pages; the 64 MiB cache of the reading connection only grew the
      // writer's memory (measured: peak RSS 574 -> 446 MB at full rate, same speed).
      db.$client.exec("PRAGMA cache_size = -8192");
      host = new WriterHost(new EventWriter(db, geoResolver(req.geo)));
    } else {
      if (!host) throw new Error("the event writer is not open");
      value = host.handle(req);
      if (req.op === "close") {
        // Leave the database file complete on its own when Core stops (WAL emptied).
        db?.$client.exec("PRAGMA wal_checkpoint(TRUNCATE)");
        db?.$client.close();
        db = host = null;
      }
    }
    self.postMessage({ rid, ok: true, value, data: dataOf(req) }, transferOf(req));
  } catch (err) {
    self.postMessage({ rid, ok: false, error: (err as Error).message ?? String(err), data: dataOf(req) }, transferOf(req));
  }
};
