/**
 * Terminal recordings arriving from nodes in SessionRecording chunks on the control channel
 * (docs/protocol.md#sessionrecording). A connection's chunks come in order; a recording is
 * stored once its last chunk is in and its SHA-256 matches, and the node gets a
 * SessionRecordingAck either way. A connection that drops mid-transfer leaves nothing behind:
 * the node sends the recording again, from the start, once it has registered again.
 */
import { createHash } from "node:crypto";
import type { SessionRecording, SessionRecordingAck } from "../../protocol/messages";

/** Recordings one connection may have under way at once (a node sends one at a time). */
const MAX_OPEN_PER_CONNECTION = 4;

interface Open {
  sha256: string;
  size: number;
  chunks: Buffer[];
  received: number;
}

export type SaveRecording = (nodeId: bigint, potId: string, session: string, data: Buffer, sha256: string) => void;

export class RecordingReceiver {
  private readonly open = new WeakMap<object, Map<string, Open>>();

  constructor(private readonly save: SaveRecording) {}

  /**
   * Takes a chunk from the connection `conn` of node `nodeId`; returns the ack to send when the
   * recording is complete or refused, null while more chunks are due.
   */
  chunk(conn: object, nodeId: bigint, r: SessionRecording): SessionRecordingAck | null {
    let mine = this.open.get(conn);
    if (!mine) this.open.set(conn, (mine = new Map()));
    const key = `${r.pot_id}/${r.session}`;
    const refuse = (message: string) => {
      mine.delete(key);
      return { pot_id: r.pot_id, session: r.session, ok: false, message };
    };
    let o = mine.get(key);
    if (r.offset === 0) {
      if (!o && mine.size >= MAX_OPEN_PER_CONNECTION) return refuse(`more than ${MAX_OPEN_PER_CONNECTION} recordings under way on this connection; send one at a time`);
      o = { sha256: r.sha256, size: r.size, chunks: [], received: 0 };
      mine.set(key, o);
    }
    if (!o) return refuse(`chunk at offset ${r.offset} of a recording whose start was not received; send it again from offset 0`);
    if (r.offset !== o.received || r.size !== o.size || r.sha256 !== o.sha256) return refuse(`chunk at offset ${r.offset} does not follow the ${o.received} bytes received (or names another size or hash); send it again from offset 0`);
    const bytes = Buffer.from(r.data, "base64");
    if (bytes.length === 0) return refuse("empty chunk");
    if (o.received + bytes.length > o.size) return refuse(`chunks add up to more than the ${o.size} bytes announced`);
    o.chunks.push(bytes);
    o.received += bytes.length;
    if (o.received < o.size) return null;
    mine.delete(key);
    const data = Buffer.concat(o.chunks);
    const hash = createHash("sha256").update(data).digest("hex");
    if (hash !== o.sha256) return refuse(`the recording's SHA-256 is ${hash}, not ${o.sha256} as announced`);
    this.save(nodeId, r.pot_id, r.session, data, hash);
    return { pot_id: r.pot_id, session: r.session, ok: true, message: `stored ${data.length} bytes` };
  }

  /** The connection closed: recordings under way on it are dropped. */
  closed(conn: object): void {
    this.open.delete(conn);
  }
}
