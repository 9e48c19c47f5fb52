/**
 * Ships the terminal recordings a node's honeypots make to Core (docs/protocol.md#sessionrecording).
 *
 * A honeypot announces a finished recording with `cowrie.log.closed` (`ttylog`: its file,
 * relative to the pot's folder). The relay hands that event here; the recording is queued
 * (the queue is kept on disk, so a node restart does not forget it) and sent on the control
 * channel in SessionRecording chunks, one recording at a time, each until Core's
 * SessionRecordingAck. A recording that is not acknowledged (Core away, connection cut) is
 * sent again from the start once the node is registered again; one Core defers (it holds as
 * many unfinished recordings as it takes) goes again after the wait Core names. The file stays in the pot's
 * folder; only a file inside that folder is read, and Core gets it as asciicast (recording-file.ts).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import type { Logger } from "../log";
import { RECORDING_CHUNK_BYTES, type SessionRecording, type SessionRecordingAck } from "../protocol/messages";
import { readRecording } from "./recording-file";

interface Pending {
  pot_id: string;
  session: string;
  ttylog: string;
}

export interface RecordingShipperOptions {
  nodeId: bigint;
  /**
   * The folder of a pot whose recordings the node sends: one it installed, or one it relays
   * for (`pot_dir`); null for any other pot an event names.
   */
  potDir(potId: string): string | null;
  /** File that keeps the queue across restarts. */
  queueFile: string;
  /** Sends a message on the control channel; false when not registered. */
  send(kind: "SessionRecording", payload: SessionRecording): boolean;
  /** How long to wait for Core's ack before sending again (on the next registration). */
  ackTimeoutMs?: number;
  logger: Logger;
}

const SESSION = /^[A-Za-z0-9_.:-]{1,64}$/;
/** Bounds on the wait a deferring Core asks for: never a busy loop, never a recording parked for long. */
const MIN_RETRY_MS = 100;
const MAX_RETRY_MS = 10 * 60_000;

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
    if (typeof ttylog !== "string" || typeof session !== "string" || !SESSION.test(session) || this.opts.potDir(potId) === null) return;
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
    if (!ack.ok && ack.retry_after_ms !== undefined) return this.later(ack);
    if (!ack.ok) this.opts.logger.warn({ pot_id: ack.pot_id, session: ack.session, message: ack.message }, "Core refused a session recording; not sending it again");
    this.done();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  /** Core is busy: the recording stays at the head of the queue and goes again after the wait Core named. */
  private later(ack: SessionRecordingAck): void {
    const waitMs = Math.min(Math.max(ack.retry_after_ms ?? 0, MIN_RETRY_MS), MAX_RETRY_MS);
    this.opts.logger.info({ pot_id: ack.pot_id, session: ack.session, retry_in_ms: waitMs, message: ack.message }, "Core deferred a session recording; sending it again later");
    if (this.timer) clearTimeout(this.timer);
    // Until then the recording is not in flight: a registration meanwhile sends it at once.
    this.inFlight = null;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.pump();
    }, waitMs);
    this.timer.unref?.();
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
    const dir = this.opts.potDir(head.pot_id);
    const file = dir === null ? { reason: "the node has no folder for this pot (not installed here, not in pot_dir)" } : readRecording(dir, head.ttylog);
    if ("reason" in file) {
      this.opts.logger.warn({ pot_id: head.pot_id, session: head.session, ttylog: head.ttylog, reason: file.reason }, "cannot send a session recording; skipped");
      return this.done();
    }
    if (file.truncated) this.opts.logger.info({ pot_id: head.pot_id, session: head.session, ttylog: head.ttylog }, "a Cowrie tty log is longer than a recording Core takes; sending its start");
    const { data } = file;
    const sha256 = createHash("sha256").update(data).digest("hex");
    const base = { node_id: this.opts.nodeId, pot_id: head.pot_id, session: head.session, sha256, size: data.length };
    for (let offset = 0; offset < data.length; offset += RECORDING_CHUNK_BYTES) {
      const chunk = data.subarray(offset, offset + RECORDING_CHUNK_BYTES).toString("base64");
      // Not registered: sent when the node is (registered() pumps again).
      if (!this.opts.send("SessionRecording", { ...base, offset, data: chunk })) return;
    }
    this.inFlight = head;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      // No answer: the next registration sends it again.
      this.timer = null;
    }, this.opts.ackTimeoutMs ?? 60_000);
    this.timer.unref?.();
  }

  private save(): void {
    try {
      writeFileSync(this.opts.queueFile, JSON.stringify(this.queue));
    } catch (e) {
      this.opts.logger.warn({ err: (e as Error).message }, "cannot save the queue of recordings to send");
    }
  }
}
