/**
 * Ships the terminal recordings a node's honeypots make to Core (docs/protocol.md#sessionrecording).
 *
 * A honeypot announces a finished recording with `cowrie.log.closed` (`ttylog`: its file,
 * relative to the pot's folder). The relay hands that event here; the recording is queued
 * (the queue is kept on disk, so a node restart does not forget it) and sent on the control
 * channel in SessionRecording chunks, one recording at a time, each until Core's
 * SessionRecordingAck. A recording that is not acknowledged (Core away, connection cut) is
 * sent again from the start once the node is registered again. The file stays in the pot's
 * folder; only a file inside that folder, at most MAX_RECORDING_BYTES, is sent.
 */
import { existsSync, readFileSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Logger } from "../log";
import { MAX_RECORDING_BYTES, RECORDING_CHUNK_BYTES, type SessionRecording, type SessionRecordingAck } from "../protocol/messages";

interface Pending {
  pot_id: string;
  session: string;
  ttylog: string;
}

export interface RecordingShipperOptions {
  nodeId: bigint;
  /** The folder of a pot. */
  potDir(potId: string): string;
  /** File that keeps the queue across restarts. */
  queueFile: string;
  /** Sends a message on the control channel; false when not registered. */
  send(kind: "SessionRecording", payload: SessionRecording): boolean;
  /** How long to wait for Core's ack before sending again (on the next registration). */
  ackTimeoutMs?: number;
  logger: Logger;
}

const SESSION = /^[A-Za-z0-9_.:-]{1,64}$/;

export class RecordingShipper {
  private queue: Pending[];
  /** The recording sent and waiting for its ack. */
  private inFlight: Pending | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(private readonly opts: RecordingShipperOptions) {
    this.queue = [];
    try {
      if (existsSync(opts.queueFile)) this.queue = (JSON.parse(readFileSync(opts.queueFile, "utf8")) as Pending[]).filter((p) => typeof p?.pot_id === "string" && typeof p.session === "string" && typeof p.ttylog === "string");
    } catch (e) {
      opts.logger.warn({ err: (e as Error).message, file: opts.queueFile }, "cannot read the queue of recordings to send; starting with an empty one");
    }
  }

  /** An event a pot sent through the relay: a `cowrie.log.closed` queues its recording. */
  onEvent(potId: string, event: Record<string, unknown>): void {
    if (event.eventid !== "cowrie.log.closed" && event.event_type !== "cowrie.log.closed") return;
    const data = (typeof event.data === "object" && event.data !== null ? event.data : event) as Record<string, unknown>;
    const { ttylog, session } = data;
    if (typeof ttylog !== "string" || typeof session !== "string" || !SESSION.test(session)) return;
    this.queue.push({ pot_id: potId, session, ttylog });
    this.save();
    this.pump();
  }

  /** The node (re)registered: anything unacknowledged goes (again). */
  registered(): void {
    this.inFlight = null;
    this.pump();
  }

  onAck(ack: SessionRecordingAck): void {
    const head = this.inFlight;
    if (!head || head.pot_id !== ack.pot_id || head.session !== ack.session) return;
    if (!ack.ok) this.opts.logger.warn({ pot_id: ack.pot_id, session: ack.session, message: ack.message }, "Core refused a session recording; not sending it again");
    this.done();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inFlight = null;
    this.queue.shift();
    this.save();
    this.pump();
  }

  private pump(): void {
    if (this.stopped || this.inFlight || this.queue.length === 0) return;
    const head = this.queue[0]!;
    const file = this.confined(head);
    if (typeof file !== "string") {
      this.opts.logger.warn({ pot_id: head.pot_id, session: head.session, ttylog: head.ttylog, reason: file.reason }, "cannot send a session recording; skipped");
      return this.done();
    }
    const data = readFileSync(file);
    const sha256 = createHash("sha256").update(data).digest("hex");
    const base = { node_id: this.opts.nodeId, pot_id: head.pot_id, session: head.session, sha256, size: data.length };
    for (let offset = 0; offset < data.length; offset += RECORDING_CHUNK_BYTES) {
      const chunk = data.subarray(offset, offset + RECORDING_CHUNK_BYTES).toString("base64");
      // Not registered: sent when the node is (registered() pumps again).
      if (!this.opts.send("SessionRecording", { ...base, offset, data: chunk })) return;
    }
    this.inFlight = head;
    this.timer = setTimeout(() => {
      // No answer: the next registration sends it again.
      this.timer = null;
    }, this.opts.ackTimeoutMs ?? 60_000);
    this.timer.unref?.();
  }

  /** The recording's file when it is inside the pot's folder and small enough; else why not. */
  private confined(p: Pending): string | { reason: string } {
    const dir = this.opts.potDir(p.pot_id);
    const path = resolve(dir, p.ttylog);
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return { reason: "the file does not exist" };
    }
    const rel = relative(realpathSync(dir), real);
    if (rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)) return { reason: "the file is outside the pot's folder" };
    const st = statSync(real);
    if (!st.isFile()) return { reason: "not a file" };
    if (st.size === 0 || st.size > MAX_RECORDING_BYTES) return { reason: `its size ${st.size} is not between 1 and ${MAX_RECORDING_BYTES} bytes` };
    return real;
  }

  private save(): void {
    try {
      writeFileSync(this.opts.queueFile, JSON.stringify(this.queue));
    } catch (e) {
      this.opts.logger.warn({ err: (e as Error).message }, "cannot save the queue of recordings to send");
    }
  }
}
