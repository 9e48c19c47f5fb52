/**
 * The event socket (TCP, default 9100): one JSON event per line from nodes and from
 * honeypots that send directly (Cowrie's output plugin, a PHP forwarder).
 *
 * - A connection whose first line is `EventStreamHello {node_id, acks: true}` gets
 *   `EventAck {seq}` after each commit, seq = its lines so far (after the hello) that are
 *   committed or rejected. Nothing is ever written to a connection that did not ask.
 * - Bad input (not JSON, not an object, over `max_message_bytes`, nested deeper than
 *   `max_nesting_depth`, not an event) is counted, logged rate-limited with the peer's
 *   address, and skipped; the connection goes on. Every line counts once in seq, whatever
 *   becomes of it, so an ack never covers a line that was not dealt with.
 * - An authenticated stream (hello with a valid TOTP) is its node's: its events carry that
 *   node_id whatever the lines say.
 * - Backpressure: while the pipeline is overloaded, every connection stops reading
 *   (`socket.pause()`); the kernel's buffers then push back on the senders. Reading is shared
 *   fairly (fair-share.ts): a connection with a larger kernel buffer must not crowd out the others.
 * - Idle connections are closed (`first_message_timeout_ms`, `idle_timeout_ms`; see the config
 *   keys for who is exempt), so silent peers cannot hold connection slots for good.
 * - `stop()` stops accepting and keeps reading until each connection has been quiet for a
 *   moment (what the peers had already sent is taken in), then closes them (see `drain`).
 */
import type { Socket, TCPSocketListener } from "bun";
import type { CoreConfig } from "../../config";
import type { Logger } from "../../log";
import { nestedDeeperThan } from "../../protocol/depth";
import { LineSplitter, splitConcatenated, type LineSink } from "../../protocol/framing";
import { stringify } from "../../protocol/json";
import { decodeEnvelope, envelope, type EventStreamHello } from "../../protocol/messages";
import { SocketWriter } from "../../net/socket-writer";
import { RateLimitedLog } from "../../net/rate-limited-log";
import { startIdleSweep } from "../../net/idle-sweep";
import { isLoopback, type NodeAuth } from "../auth";
import type { ConnectionCounter } from "../auth/rate-limit";
import type { TlsOptions } from "../tls";
import { FairShare } from "./fair-share";
import { fromScanned } from "./from-scanned";
import { normalise, toIngestEvent, type NormaliseContext } from "./normalise";
import { parseEventLine } from "./parse";
import { newScannedLine, scanNativeLine } from "./scan";
import { scanEnvelopeLine } from "./scan-envelope";
import type { Ingest, StreamTag } from "./types";

export interface EventSocketOptions {
  host: string;
  port: number;
  ingest: Ingest;
  config: Pick<CoreConfig, "max_message_bytes" | "max_nesting_depth"> & Partial<Pick<CoreConfig, "first_message_timeout_ms" | "idle_timeout_ms">>;
  logger: Logger;
  /** On stop: how long a connection must be quiet before it is closed. */
  drainQuietMs?: number;
  /** On stop: the longest wait for busy connections before they are closed anyway. */
  drainMaxMs?: number;
  /** Node authentication and connection limits; absent means open (the default; README, "Security"). */
  security?: EventSocketSecurity;
  tls?: TlsOptions;
  /**
   * Whether an unauthenticated hello may name this node's spool: only a sender that is the
   * node (its control connection comes from the same address) may make Core skip lines.
   */
  isNodeAt?: (nodeId: bigint, address: string) => boolean;
}

export interface EventSocketSecurity {
  nodeAuth: NodeAuth;
  connections: ConnectionCounter;
  /** With node authentication on, still take unauthenticated lines from loopback. */
  loopbackUnauthenticated: boolean;
}

export interface EventSocketHandle {
  readonly port: number;
  stop(): Promise<void>;
}

interface Conn extends NormaliseContext {
  socket: Socket<Conn>;
  /** The peer's address (no port), for limits and authentication. */
  address: string;
  /** Node authentication is on and this stream has not proven itself yet. */
  mustAuthenticate: boolean;
  refused: boolean;
  /** Lines that arrived while the hello was being checked, or the spool's committed position settled. */
  held: string[] | null;
  /** Spool positions up to this one are committed already: their lines are repeats. */
  skipThrough: number;
  remote: string;
  splitter: LineSplitter;
  sink: LineSink;
  writer: SocketWriter | null;
  tag: StreamTag;
  /** The first line may be an EventStreamHello. */
  first: boolean;
  acks: boolean;
  /** Opened with EventStreamHello: a node's forwarder, which reconnects when closed. */
  hello: boolean;
  acked: number;
  paused: boolean;
  lastData: number;
}

const HELLO = new Set(["EventStreamHello"]);

/** A Protocol v2 envelope as clients write it: `{"version":...` or `{"message":...`. */
function looksLikeEnvelope(text: string): boolean {
  return text.charCodeAt(0) === 123 && text.charCodeAt(1) === 34 && (text.startsWith("version", 2) || text.startsWith("message", 2));
}

export function startEventSocket(opts: EventSocketOptions): EventSocketHandle {
  const { ingest, logger } = opts;
  const maxBytes = opts.config.max_message_bytes;
  const maxDepth = opts.config.max_nesting_depth;
  const sockets = new Set<Socket<Conn>>();
  let listenerClosed = false;
  let lastOpen = 0;

  const scanned = newScannedLine();
  const warn = new RateLimitedLog(logger);
  const idle = { firstMessageMs: opts.config.first_message_timeout_ms ?? 0, idleMs: opts.config.idle_timeout_ms ?? 0 };
  // A sender without a hello may not notice a close until one of its events is lost (Cowrie's
  // output plugin): such streams are closed only before their first line, and not from
  // loopback when no authentication is asked of them.
  const stopSweep = startIdleSweep(idle, (now) => {
    for (const s of sockets) {
      const c = s.data;
      if (c.paused || c.held || c.refused) continue;
      const limit = c.first ? (isLoopback(c.address) && !c.mustAuthenticate ? 0 : idle.firstMessageMs) : c.hello ? idle.idleMs : 0;
      if (limit <= 0 || now - c.lastData < limit) continue;
      warn.warn(`${c.address}:idle`, { remote: c.remote }, `event connection silent for ${limit} ms; closed`);
      if (c.hello) s.end(stringify(envelope("Error", { code: "idle_timeout", message: `nothing received for ${limit} ms; closing` })) + "\n");
      else s.end();
    }
  });

  const submitValue = (c: Conn, value: unknown) => {
    const r = normalise(value, c);
    if (r.ok) ingest.enqueue(toIngestEvent(r.event), c.tag);
    else ingest.reject(c.tag, c.remote, "invalid_event", r.error);
  };

  /** `bytes[at...]` holds the line when it is ASCII (see LineSink), else `at` is -1. */
  const onLine = (c: Conn, text: string, bytes: Uint8Array | null, at: number) => {
    if (c.first) {
      c.first = false;
      if (text.includes("EventStreamHello") && hello(c, text)) return;
      if (c.mustAuthenticate) return refuse(c, "EventStreamHello with node_id and totp_code must come first: this Core authenticates nodes");
    }
    if (c.refused) return;
    if (c.held) {
      c.held.push(text);
      return;
    }
    c.tag.lineNo++;
    if (c.tag.spool && c.tag.spool.first + c.tag.lineNo <= c.skipThrough) return ingest.skipDuplicate(c.tag);
    // The line is counted in seq now: whatever fails below, it is settled as rejected, never lost.
    try {
      take(c, text, bytes, at);
    } catch (e) {
      ingest.reject(c.tag, c.remote, "internal_error", `line of ${text.length} characters could not be taken: ${(e as Error).message}`);
    }
  };

  const take = (c: Conn, text: string, bytes: Uint8Array | null, at: number) => {
    // No line passes both scans (an envelope has no eventid at its top): the order only saves
    // time. A line that opens as an envelope goes to that scan first, since the flat scan reads
    // the whole message before it finds no eventid (2% of the receiving thread, measured).
    const scannedOk = looksLikeEnvelope(text)
      ? scanEnvelopeLine(text, scanned, maxDepth) || scanNativeLine(text, scanned, maxDepth)
      : scanNativeLine(text, scanned, maxDepth) || scanEnvelopeLine(text, scanned, maxDepth);
    if (scannedOk) {
      const ev = fromScanned(scanned, c);
      if (ev) return ingest.enqueue(ev, c.tag, scanned, bytes ?? undefined, at);
    }
    if (nestedDeeperThan(text, maxDepth)) return ingest.reject(c.tag, c.remote, "too_deep", `line nested deeper than ${maxDepth} levels (${text.length} characters)`);
    let value: unknown;
    try {
      value = parseEventLine(text);
    } catch {
      // Some senders write objects back to back with no newline; split only on failure.
      const parts = splitConcatenated(text);
      if (!parts) return ingest.reject(c.tag, c.remote, "bad_json", `line is not valid JSON (${text.length} characters)`);
      const values: unknown[] = [];
      try {
        for (const p of parts) values.push(parseEventLine(p));
      } catch {
        return ingest.reject(c.tag, c.remote, "bad_json", `line is not valid JSON (${text.length} characters)`);
      }
      for (const v of values) submitValue(c, v);
      return;
    }
    submitValue(c, value);
  };

  const hello = (c: Conn, text: string): boolean => {
    if (nestedDeeperThan(text, maxDepth)) return false;
    let value: unknown;
    try {
      value = parseEventLine(text);
    } catch {
      return false;
    }
    const msg = decodeEnvelope(value, HELLO);
    if (!msg.ok || msg.kind !== "EventStreamHello") return false;
    const payload = msg.payload;
    if (!c.mustAuthenticate) {
      opened(c, payload, false);
      return true;
    }
    const auth = opts.security!.nodeAuth.eventStream(payload.node_id, payload.totp_code, c.address);
    if (!(auth instanceof Promise)) {
      if (!auth.ok) refuse(c, auth.message);
      else {
        c.mustAuthenticate = false;
        opened(c, payload, true);
      }
      return true;
    }
    // Checked against the database (PostgreSQL): the lines after the hello wait behind the answer.
    c.held = [];
    c.socket.pause();
    void auth.then((result) => {
      if (c.refused || !sockets.has(c.socket)) {
        c.held = null;
        return;
      }
      if (!result.ok) {
        c.held = null;
        return refuse(c, result.message);
      }
      c.mustAuthenticate = false;
      if (!opened(c, payload, true)) release(c);
    });
    return true;
  };

  /** The hello is accepted; true when the lines after it wait for the spool's position to settle. */
  const opened = (c: Conn, payload: EventStreamHello, authenticated: boolean): boolean => {
    c.nodeId = payload.node_id ?? null;
    c.nodeProven = authenticated && c.nodeId !== null;
    c.acks = payload.acks === true;
    c.hello = true;
    const { spool_id, first_seq } = payload as { spool_id?: unknown; first_seq?: unknown };
    let settling = false;
    if (
      c.nodeId !== null &&
      typeof spool_id === "string" &&
      spool_id.length > 0 &&
      spool_id.length <= 128 &&
      Number.isSafeInteger(first_seq) &&
      (first_seq as number) >= 0 &&
      (authenticated || opts.isNodeAt?.(c.nodeId, c.address))
    ) {
      const key = `spool:${c.nodeId}:${spool_id}`;
      c.tag.spool = { key, first: first_seq as number };
      // Lines of this spool's previous connection may still be on their way to the disk; once
      // they are committed, the committed position is final and repeats can be told apart.
      c.held ??= [];
      settling = true;
      c.socket.pause();
      void ingest.flush().then(() => {
        c.skipThrough = ingest.spoolCommitted(key);
        release(c);
      });
    }
    logger.debug({ remote: c.remote, node_id: c.nodeId?.toString(), acks: c.acks }, "event stream opened");
    return settling;
  };

  /** Reads the held lines, then the socket again. */
  const release = (c: Conn) => {
    const held = c.held ?? [];
    c.held = null;
    for (const line of held) onLine(c, line, null, -1);
    if (c.paused && ingest.isOverloaded) return; // the relief resumes it
    c.paused = false;
    c.socket.resume();
  };

  /** Refuses an unauthenticated stream: one Error line, then the connection is closed. */
  const refuse = (c: Conn, message: string) => {
    c.refused = true;
    warn.warn(`${c.address}:refused`, { remote: c.remote }, `event stream refused: ${message}`);
    c.socket.end(stringify(envelope("Error", { code: "unauthenticated", message })) + "\n");
  };

  const fair = new FairShare<Conn>({ ingest, sockets, holds: (c) => c.held !== null });

  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: opts.host,
    port: opts.port,
    tls: opts.tls,
    socket: {
      open(socket) {
        if (listenerClosed) {
          socket.end();
          return;
        }
        lastOpen = Date.now();
        const sec = opts.security;
        if (sec && !sec.connections.acquire(socket.remoteAddress)) {
          warn.warn(`${socket.remoteAddress}:too_many_connections`, { remote: socket.remoteAddress }, "too many event connections from one address; refused");
          socket.end(stringify(envelope("Error", { code: "too_many_connections", message: `too many connections from ${socket.remoteAddress}` })) + "\n");
          return;
        }
        sockets.add(socket);
        ingest.counters.connections++;
        const loopback = isLoopback(socket.remoteAddress);
        const c: Conn = {
          socket,
          address: socket.remoteAddress,
          mustAuthenticate: !!sec?.nodeAuth.enabled && !(loopback && sec.loopbackUnauthenticated),
          refused: false,
          held: null,
          skipThrough: 0,
          remote: `${socket.remoteAddress}:${socket.remotePort}`,
          splitter: new LineSplitter(maxBytes),
          sink: null as unknown as LineSink,
          writer: null,
          tag: { lineNo: 0, outstanding: 0, settled: () => {} },
          first: true,
          acks: false,
          hello: false,
          acked: 0,
          paused: false,
          lastData: Date.now(),
          receivedAt: Date.now(),
          maxAgeMs: ingest.maxEventAgeMs,
          nodeId: null,
          nodeProven: false,
          nodeOfPot: (potId) => ingest.nodeOfPot(potId),
          potTypeOf: (nodeId, potId) => ingest.potTypeOf(nodeId, potId),
        };
        c.sink = {
          line: (text, bytes, at) => onLine(c, text, bytes, at),
          oversized: (bytes) => {
            if (c.refused) return;
            if (c.mustAuthenticate) return refuse(c, "EventStreamHello with node_id and totp_code must come first: this Core authenticates nodes");
            c.first = false;
            c.tag.lineNo++;
            ingest.reject(c.tag, c.remote, "message_too_large", `line of ${bytes} bytes exceeds the limit of ${maxBytes} bytes`);
          },
        };
        c.tag.settled = (seq) => {
          if (!c.acks || seq <= c.acked || socket.readyState !== 1) return;
          c.acked = seq;
          c.writer ??= new SocketWriter(socket);
          c.writer.write(stringify(envelope("EventAck", { seq })) + "\n");
        };
        socket.data = c;
      },
      data(socket, chunk) {
        const c = socket.data;
        c.lastData = c.receivedAt = Date.now();
        c.splitter.push(chunk, c.sink);
        fair.afterChunk(socket);
      },
      drain(socket) {
        socket.data.writer?.drain();
      },
      close(socket) {
        const c = socket.data;
        if (!c || !sockets.delete(socket)) return;
        ingest.counters.connections--;
        opts.security?.connections.release(c.address);
        // A peer may close without a final newline: its last line counts.
        c.receivedAt = Date.now();
        c.splitter.end(c.sink);
      },
      error(socket, error) {
        logger.debug({ remote: socket.data?.remote, err: error.message }, "event connection error");
      },
    },
  });

  const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /**
   * Stopping loses nothing that peers already sent. A peer's connection may be established by
   * the kernel (in the listen backlog, its data buffered) before this process has accepted it,
   * so the listener closes only once no connection has arrived for `quietMs`; then every
   * connection is read until it has been quiet for `quietMs` (a paused one still has data),
   * and closed. `maxMs` bounds it all for peers that never stop sending.
   */
  const drain = async () => {
    const quietMs = opts.drainQuietMs ?? 200;
    const since = Date.now();
    const deadline = since + (opts.drainMaxMs ?? 10_000);
    while (Date.now() - Math.max(since, lastOpen) < quietMs && Date.now() < deadline) await tick(Math.min(quietMs, 50));
    listenerClosed = true;
    server.stop(false);
    while (sockets.size > 0 && Date.now() < deadline) {
      const now = Date.now();
      for (const s of sockets) if (!s.data.paused && now - Math.max(s.data.lastData, since) >= quietMs) s.end();
      if (sockets.size > 0) await tick(Math.min(quietMs, 50));
    }
    for (const s of sockets) s.end();
  };

  let stopped: Promise<void> | null = null;
  return {
    get port() {
      return server.port;
    },
    stop() {
      return (stopped ??= (async () => {
        stopSweep();
        await drain();
        fair.stop();
        await ingest.flush();
      })());
    },
  };
}
