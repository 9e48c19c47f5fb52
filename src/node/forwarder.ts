/**
 * Sends the spool to Core's event socket, in order, and deletes what Core acknowledged.
 *
 * Each connection opens with `EventStreamHello {node_id, acks:true}`; Core answers
 * `EventAck {seq}` after commit, seq counting the lines of this connection. So the spool seq of
 * a connection's k-th line is `base + k`, where base is the first unacknowledged seq when the
 * connection opened. On reconnect everything unacknowledged is sent again, from base, in order.
 * At most `window` events are in flight, which bounds both the replay after a reconnect and
 * what Core buffers for us.
 *
 * With several Core instances the forwarder goes where the control link is registered
 * (`follow`): what the lost instance had not acknowledged is still in the spool and is sent to
 * the new one from the first unacknowledged seq, as after any reconnect.
 */
import { parseWithIds, stringify } from "../protocol/json";
import { decodeEnvelope, envelope } from "../protocol/messages";
import { startReconnecting, type LineConnection, type PeerOptions } from "./reconnect";
import type { Spool } from "./spool";

const FROM_CORE = new Set(["EventAck", "Error"]);
/** Stop writing while this much is queued in our socket writer; resume on drain. */
const HIGH_WATER_BYTES = 1024 * 1024;
const BATCH_EVENTS = 2048;

export interface ForwarderOptions extends PeerOptions {
  nodeId: bigint;
  spool: Spool;
  window: number;
  /** Warn when Core holds events this long without acknowledging any (an ack-less Core). */
  ackWarnMs?: number;
  /** Extra EventStreamHello fields proving the node's identity (a TOTP code). */
  helloAuth?: () => Record<string, string>;
  /** Core refused the hello (its code was not spent). */
  helloRefused?: () => void;
  /** Milliseconds until the hello can carry a code Core will take (see ReconnectOptions.readyIn). */
  readyIn?: () => number;
  /** Where to go after losing Core's event socket (see ReconnectOptions.follow). */
  follow?: () => number | "wait" | null;
}

export interface ForwarderHandle {
  readonly connected: boolean;
  /** Sends what the spool holds, as far as the window allows. Cheap to call often. */
  pump(): void;
  /** Resolves once Core has acknowledged everything spooled so far. */
  drained(): Promise<void>;
  /** Resolves once Core has acknowledged every event before spool seq `upTo`. */
  acknowledged(upTo: number): Promise<void>;
  /** The node registered with Core `peer`: send events there (reconnecting if elsewhere). */
  follow(peer: number): void;
  stop(): Promise<void>;
}

export function startForwarder(opts: ForwarderOptions): ForwarderHandle {
  const { spool, logger } = opts;
  let conn: LineConnection | null = null;
  let base = 0;
  let sent = 0;
  let ackTimer: ReturnType<typeof setTimeout> | null = null;
  let drainWaiters: { upTo: number; resolve: () => void }[] = [];

  const clearAckTimer = () => {
    if (ackTimer) clearTimeout(ackTimer);
    ackTimer = null;
  };

  const pump = () => {
    const c = conn;
    if (!c) return;
    while (c.pendingBytes < HIGH_WATER_BYTES && sent < spool.head) {
      const room = opts.window - (sent - spool.acked);
      if (room <= 0) break;
      const { first, lines } = spool.read(sent, Math.min(room, BATCH_EVENTS));
      if (first !== sent) {
        // The spool dropped events this connection had not sent yet: seq numbering on this
        // connection would no longer match Core's line count, so start a fresh one.
        logger.warn({ from: sent, to: first }, "events were dropped from the spool while sending; reconnecting");
        conn = null;
        client.reconnect();
        return;
      }
      if (lines.length === 0) break;
      if (!c.write(lines.join("\n") + "\n")) return;
      sent += lines.length;
      ackTimer ??= setTimeout(() => {
        logger.warn({ in_flight: sent - spool.acked }, "Core has not acknowledged events; does its event socket support EventStreamHello acks?");
      }, opts.ackWarnMs ?? 60_000);
    }
  };

  const onLine = (text: string, from: LineConnection) => {
    // An ack counts lines of its own connection; one from a connection already replaced
    // (fail-over) would be read against the new base. Ignoring it only means a resend.
    if (from !== conn) return;
    let value: unknown;
    try {
      value = parseWithIds(text);
    } catch {
      return logger.warn("Core's event socket sent a line that is not JSON; ignored");
    }
    const msg = decodeEnvelope(value, FROM_CORE);
    if (!msg.ok) return logger.warn({ code: msg.code }, `ignored a message from Core's event socket: ${msg.message}`);
    if (msg.kind === "Error") {
      if (msg.payload.code === "unauthenticated" || msg.payload.code === "too_many_connections") opts.helloRefused?.();
      // Core closes a stream that stays quiet (docs/protocol.md); the next connection resumes.
      if (msg.payload.code === "idle_timeout") return logger.debug({ code: msg.payload.code }, `Core's event socket reported: ${msg.payload.message}`);
      return logger.warn({ code: msg.payload.code }, `Core's event socket reported: ${msg.payload.message}`);
    }
    if (msg.kind !== "EventAck") return;
    const upTo = base + msg.payload.seq;
    if (upTo > sent) logger.warn({ seq: msg.payload.seq, sent: sent - base }, "Core acknowledged more events than were sent on this connection");
    spool.ack(Math.min(upTo, sent));
    if (drainWaiters.length) drainWaiters = drainWaiters.filter((w) => (spool.acked >= w.upTo ? (w.resolve(), false) : true));
    client.resetBackoff();
    clearAckTimer();
    pump();
  };

  const client = startReconnecting({
    ...opts,
    onOpen: (c) => {
      conn = c;
      base = sent = spool.acked;
      // spool_id / first_seq name the stream position of the first line, so that a Core can
      // recognise a replay of events it committed but could not acknowledge before it died.
      // Core ignores fields it does not know.
      const hello = { node_id: opts.nodeId, acks: true, spool_id: spool.id, first_seq: base, ...opts.helloAuth?.() };
      c.write(stringify(envelope("EventStreamHello", hello)) + "\n");
      if (spool.pending > 0) logger.info({ events: spool.pending }, "connected to Core's event socket; sending spooled events");
      pump();
    },
    onLine,
    onClose: (c) => {
      if (conn === c) conn = null;
      clearAckTimer();
      if (spool.pending > 0) logger.warn({ unacknowledged: spool.pending }, "lost Core's event socket; events stay in the spool");
    },
    onDrain: () => pump(),
  });

  const acknowledged = (upTo: number): Promise<void> => {
    if (spool.acked >= upTo) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    drainWaiters.push({ upTo, resolve });
    return promise;
  };

  return {
    get connected() {
      return conn !== null;
    },
    pump,
    drained: () => acknowledged(spool.head),
    acknowledged,
    follow: (peer) => client.moveTo(peer),
    async stop() {
      clearAckTimer();
      await client.stop();
    },
  };
}
