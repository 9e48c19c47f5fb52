/**
 * The WAL checkpointer's thread: copies committed pages from the write-ahead log into the
 * database file, off the writer's thread.
 *
 * SQLite's automatic checkpoint runs inside the commit that crosses its threshold, on the
 * committing connection: every ~57,000 events the writer stopped for ~28 ms to copy 16 MB
 * (measured: 0.48 µs per event, more than a third of the writer's time), and the event
 * socket paused meanwhile. Here the writer's connection has it off, and after each commit
 * this thread runs a PASSIVE checkpoint, which never blocks the writer. When this thread has
 * caught up, the writer's next transaction starts the log over from the beginning, so the
 * file stays small; should it ever fall far behind (RESTART_FRAMES), a RESTART checkpoint
 * makes the writer wait once until the log is copied and can start over.
 */
import { Database, type Statement } from "bun:sqlite";

declare const self: Worker;

export type CheckpointRequest = { op: "open"; path: string } | { op: "checkpoint" } | { op: "close" };
export type CheckpointReply = { ok: true; log: number; checkpointed: number } | { ok: false; error: string };

/** 64 MiB of 16 KiB pages. */
export const RESTART_FRAMES = 4096;

type CheckpointResult = { busy: number; log: number; checkpointed: number };

let db: Database | null = null;
let passive: Statement<CheckpointResult> | null = null;
let restart: Statement<CheckpointResult> | null = null;

self.onmessage = (e: MessageEvent<CheckpointRequest>) => {
  const req = e.data;
  try {
    let reply: CheckpointReply = { ok: true, log: 0, checkpointed: 0 };
    if (req.op === "open") {
      db = new Database(req.path, { strict: true });
      db.exec("PRAGMA busy_timeout = 5000");
      passive = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
      restart = db.prepare("PRAGMA wal_checkpoint(RESTART)");
    } else if (req.op === "checkpoint") {
      // Its open failed: every checkpoint fails too, rather than seem to succeed.
      if (!passive || !restart) throw new Error("the checkpointer has no open connection");
      let r = passive.get()!;
      if (r.log > RESTART_FRAMES) r = restart.get()!;
      reply = { ok: true, log: r.log, checkpointed: r.checkpointed };
    } else if (req.op === "close") {
      // Statements first: a connection with live statements stays open after close(), and
      // then the last one to close is not the one that removes the WAL file.
      passive?.finalize();
      restart?.finalize();
      db?.close();
      db = passive = restart = null;
    }
    self.postMessage(reply);
  } catch (err) {
    self.postMessage({ ok: false, error: (err as Error).message ?? String(err) } satisfies CheckpointReply);
  }
};
