/**
 * Terminal recordings arriving from nodes in SessionRecording chunks on the control channel
 * (docs/protocol.md#sessionrecording). A connection's chunks come in order; a recording is
 * stored once its last chunk is in and its SHA-256 matches, and the node gets a
 * SessionRecordingAck either way. A connection that drops mid-transfer leaves nothing behind:
 * the node sends the recording again, from the start, once it has registered again.
 *
 * A recording is held in memory until its last chunk, so what all connections hold together
 * is bounded (`max_unfinished_recording_bytes`): 16 connections with their 4 recordings each
 * took Core from 112 to 449 MB. Each recording counts at the size it announces from its first
 * chunk on, so the bytes held never pass the bound whatever the chunks do. One that would is
 * deferred: the ack says to send it again later (`retry_after_ms`), and the node keeps it.
 */
import { createHash } from "node:crypto";
import type { SessionRecording, SessionRecordingAck } from "../../protocol/messages";

/** Recordings one connection may have under way at once (a node sends one at a time). */
const MAX_OPEN_PER_CONNECTION = 4;
/** How long a deferred node waits before sending again: a recording takes well under a second to arrive. */
export const RECORDING_RETRY_AFTER_MS = 5000;

interface Open {
  sha256: string;
  size: number;
  chunks: Buffer[];
  received: number;
}

interface PerConnection {
  open: Map<string, Open>;
  /**
   * Recordings deferred on this connection: the chunks after their first one are still on
   * their way, and are dropped without an answer (the node had its one ack).
   */
  deferred: Set<string>;
}

export type SaveRecording = (nodeId: bigint, potId: string, session: string, data: Buffer, sha256: string) => void | Promise<void>;

export class RecordingReceiver {
  private readonly conns = new WeakMap<object, PerConnection>();
  /** Announced bytes of the recordings under way on every connection. */
  private held = 0;

  constructor(
    private readonly save: SaveRecording,
    /** `max_unfinished_recording_bytes`. */
    private readonly maxHeldBytes: number,
  ) {}

  /** Bytes counted against `max_unfinished_recording_bytes` now. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Takes a chunk from the connection `conn` of node `nodeId`; returns the ack to send when the
   * recording is complete, refused or deferred, null while more chunks are due. A promise when
   * the storage saves asynchronously (PostgreSQL): the ack waits for the save.
   */
  chunk(conn: object, nodeId: bigint, r: SessionRecording): SessionRecordingAck | Promise<SessionRecordingAck> | null {
    let mine = this.conns.get(conn);
    if (!mine) this.conns.set(conn, (mine = { open: new Map(), deferred: new Set() }));
    const key = `${r.pot_id}/${r.session}`;
    const refuse = (message: string) => {
      this.release(mine, key);
      return { pot_id: r.pot_id, session: r.session, ok: false, message };
    };
    let o = mine.open.get(key);
    if (r.offset === 0) {
      mine.deferred.delete(key);
      // Sent again from the start: the first attempt's bytes are no longer held.
      if (o) this.release(mine, key);
      else if (mine.open.size >= MAX_OPEN_PER_CONNECTION) return refuse(`more than ${MAX_OPEN_PER_CONNECTION} recordings under way on this connection; send one at a time`);
      if (this.held + r.size > this.maxHeldBytes) return this.defer(mine, key, r);
      o = { sha256: r.sha256, size: r.size, chunks: [], received: 0 };
      mine.open.set(key, o);
      this.held += o.size;
    }
    if (!o) {
      if (mine.deferred.has(key)) return null;
      return refuse(`chunk at offset ${r.offset} of a recording whose start was not received; send it again from offset 0`);
    }
    if (r.offset !== o.received || r.size !== o.size || r.sha256 !== o.sha256) return refuse(`chunk at offset ${r.offset} does not follow the ${o.received} bytes received (or names another size or hash); send it again from offset 0`);
    const bytes = Buffer.from(r.data, "base64");
    if (bytes.length === 0) return refuse("empty chunk");
    if (o.received + bytes.length > o.size) return refuse(`chunks add up to more than the ${o.size} bytes announced`);
    o.chunks.push(bytes);
    o.received += bytes.length;
    if (o.received < o.size) return null;
    this.release(mine, key);
    const data = Buffer.concat(o.chunks);
    const hash = createHash("sha256").update(data).digest("hex");
    if (hash !== o.sha256) return refuse(`the recording's SHA-256 is ${hash}, not ${o.sha256} as announced`);
    const stored = { pot_id: r.pot_id, session: r.session, ok: true, message: `stored ${data.length} bytes` };
    const saving = this.save(nodeId, r.pot_id, r.session, data, hash);
    if (!saving) return stored;
    // A database that is away is a busy Core: the node keeps the recording and sends it again.
    return saving.then(
      () => stored,
      (e: Error) => ({ pot_id: r.pot_id, session: r.session, ok: false, retry_after_ms: RECORDING_RETRY_AFTER_MS, message: `storing the recording failed (${e.message}); send it again from offset 0 in ${RECORDING_RETRY_AFTER_MS} ms` }),
    );
  }

  /** The connection closed: recordings under way on it are dropped. */
  closed(conn: object): void {
    const mine = this.conns.get(conn);
    if (!mine) return;
    for (const o of mine.open.values()) this.held -= o.size;
    this.conns.delete(conn);
  }

  private defer(mine: PerConnection, key: string, r: SessionRecording): SessionRecordingAck {
    // A node sends one recording at a time: the oldest deferral's chunks have long arrived.
    if (mine.deferred.size >= MAX_OPEN_PER_CONNECTION) mine.deferred.delete(mine.deferred.values().next().value!);
    mine.deferred.add(key);
    return {
      pot_id: r.pot_id,
      session: r.session,
      ok: false,
      retry_after_ms: RECORDING_RETRY_AFTER_MS,
      message: `busy: Core holds ${this.held} bytes of unfinished recordings and takes at most ${this.maxHeldBytes} (max_unfinished_recording_bytes); this one's ${r.size} bytes would pass it; send it again from offset 0 in ${RECORDING_RETRY_AFTER_MS} ms`,
    };
  }

  private release(mine: PerConnection, key: string): void {
    const o = mine.open.get(key);
    if (!o) return;
    mine.open.delete(key);
    this.held -= o.size;
  }
}
