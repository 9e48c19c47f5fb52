/**
 * The event writer's thread: owns one SQLite connection and answers the pipeline's requests
 * in order (see writer.ts).
 */
import { openDatabase, type Db } from "../../db";
import { EventWriter } from "../../db/event-store";
import { handleRequest, type WriterRequest } from "./writer";

declare const self: Worker;

let db: Db | null = null;
let writer: EventWriter | null = null;

self.onmessage = (e: MessageEvent<{ rid: number; req: WriterRequest }>) => {
  const { rid, req } = e.data;
  try {
    let value: unknown = null;
    if (req.op === "open") {
      // Migrations already ran on the main thread; this only finds them applied.
      db = openDatabase(req.path);
      writer = new EventWriter(db);
    } else {
      if (!writer) throw new Error("the event writer is not open");
      value = handleRequest(writer, req);
      if (req.op === "close") {
        db?.$client.close();
        db = writer = null;
      }
    }
    self.postMessage({ rid, ok: true, value });
  } catch (err) {
    self.postMessage({ rid, ok: false, error: (err as Error).message ?? String(err) });
  }
};
