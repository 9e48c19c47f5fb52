/**
 * The node control channel (TCP, Protocol v2, one JSON message per line, both directions).
 *
 * A connection must open with NodeRegistration; everything it sends afterwards is about that
 * node. A bad message is answered with an `Error` message and skipped; it never affects other
 * connections. A refused registration, whatever the reason, is answered with a refused
 * RegistrationAck and an `Error` naming the reason, and the connection is closed
 * (docs/protocol.md): the peer learns why, and cannot keep a slot without registering.
 * Buffers are bounded by `maxMessageBytes` per message and a write queue per peer; silent
 * connections are closed (`idle`).
 * PotEvent and PotLog feed the event pipeline like the event socket does, with the same
 * backpressure: while the pipeline is overloaded, connections stop reading.
 */
import type { Socket, TCPSocketListener } from "bun";
import type { Logger } from "../log";
import { LineSplitter, splitConcatenated } from "../protocol/framing";
import { nestedDeeperThan } from "../protocol/depth";
import { parseWithIds, stringify, toU64 } from "../protocol/json";
import { decodeEnvelope, envelope, type CommandResult, type Decoded, type NodeRegistration, type SessionRecordingAck } from "../protocol/messages";
import { RateLimitedLog } from "../net/rate-limited-log";
import { SocketWriter } from "../net/socket-writer";
import { startIdleSweep, type IdleLimits } from "../net/idle-sweep";
import { endLingering } from "../net/linger";
import { FairShare } from "./ingest/fair-share";
import { fromScanned } from "./ingest/from-scanned";
import type { NormaliseContext } from "./ingest/normalise";
import { newScannedLine } from "./ingest/scan";
import { scanEnvelopeLine } from "./ingest/scan-envelope";
import type { Ingest } from "./ingest/types";
import type { NodeLink, Registry } from "./registry";
import type { ConnectionCounter } from "./auth/rate-limit";
import type { NodeAuth, NodeAuthResult } from "./auth/node-auth";
import type { TlsOptions } from "./tls";
import type { RecordingReceiver } from "./transfer/recording-receiver";
import type { FileReceiver } from "./transfer/file-receiver";

const FROM_NODE = new Set(["NodeRegistration", "NodeStatusUpdate", "PotStatusUpdate", "PotEvent", "PotLog", "NodeEvent", "CommandResult", "SessionRecording", "FileOffer", "FileChunk", "NodeDrop"]);

export interface NodeChannelOptions {
  host: string;
  port: number;
  maxMessageBytes: number;
  /** Deepest nesting of a message (`max_nesting_depth`); deeper ones are refused unparsed. */
  maxNestingDepth?: number;
  registry: Registry;
  ingest: Ingest;
  onCommandResult: (result: CommandResult) => void;
  /** Terminal recordings in chunks (src/core/transfer/recording-receiver.ts); refused without one. */
  recordings?: RecordingReceiver;
  /** Files nodes send (FileOffer/FileChunk, docs/protocol.md#file-transfer); refused without one. */
  files?: FileReceiver;
  connections: ConnectionCounter;
  nodeAuth: NodeAuth;
  /** Silence allowed before registering and after (heartbeats keep a registered node busy). */
  idle?: IdleLimits;
  tls?: TlsOptions;
  logger: Logger;
}

export interface NodeChannelHandle {
  readonly port: number;
  readonly connections: number;
  stop(): void;
}

interface Conn {
  splitter: LineSplitter;
  writer: SocketWriter;
  nodeId: bigint | null;
  link: NodeLink;
  remote: string;
  /** A refusal was sent: nothing more is read, and the socket ends once its writes are out. */
  closing: boolean;
  /** Its writes are out and its FIN sent: what the peer still sends is dropped until it closes. */
  ending: boolean;
  /** When the chunk being read arrived (its events' received time). */
  lastData: number;
  /** An event of the chunk being read took the fast path: the node is touched once for the chunk. */
  sawEvent: boolean;
  /** Reading stopped while the event pipeline is overloaded. */
  paused: boolean;
  /** Lines that arrived while a registration was being checked against the database, in order. */
  held: string[] | null;
}

const NO_BYTES = Buffer.alloc(0);

export function startNodeChannel(opts: NodeChannelOptions): NodeChannelHandle {
  const { registry, ingest, logger } = opts;
  const warn = new RateLimitedLog(logger);
  const maxDepth = opts.maxNestingDepth ?? 64;
  let connections = 0;
  const sockets = new Set<Socket<Conn>>();
  const idle = opts.idle ?? { firstMessageMs: 0, idleMs: 0 };
  const stopSweep = startIdleSweep(idle, (now) => {
    for (const socket of sockets) {
      const c = socket.data;
      const limit = c.nodeId === null ? idle.firstMessageMs : idle.idleMs;
      // A connection Core stopped reading (backpressure) is not idle: its data waits in TCP.
      if (limit <= 0 || c.paused || now - c.lastData < limit) continue;
      // A closing connection whose peer does not read its last words is ended all the same.
      if (!c.closing) reply(c, "idle_timeout", c.nodeId === null ? `no NodeRegistration within ${limit} ms; closing` : `nothing received for ${limit} ms; closing`);
      c.closing = true;
      socket.end();
    }
  });
  // Node streams share the pipeline like the event socket's connections do (fair-share.ts).
  const fair = new FairShare<Conn>({ ingest, sockets, holds: (c) => c.held !== null });

  const reply = (c: Conn, code: string, message: string) => {
    warn.warn(`${c.remote}:${code}`, { remote: c.remote, node_id: c.nodeId?.toString(), code }, message);
    c.link.send("Error", { code, message });
  };

  const refuseRegistration = (c: Conn, socket: Socket<Conn>, nodeId: bigint, code: string, message: string) => {
    warn.warn(`${c.remote}:registration`, { remote: c.remote, node_id: nodeId.toString(), code }, `registration refused: ${message}`);
    c.link.send("RegistrationAck", { node_id: nodeId, accepted: false, message });
    c.link.send("Error", { code, message });
    c.closing = true;
    if (c.writer.pendingBytes === 0) endAfterRefusal(c, socket);
  };

  /** The refused peer reads the refusal whole, however much it wrote after (net/linger.ts). */
  const endAfterRefusal = (c: Conn, socket: Socket<Conn>) => {
    if (c.ending) return;
    c.ending = true;
    // Read on what it still sends (dropped: the connection is closing), even when paused.
    if (c.paused) {
      c.paused = false;
      socket.resume();
    }
    endLingering(socket);
  };

  const handle = (c: Conn, socket: Socket<Conn>, msg: Decoded) => {
    if (msg.kind === "NodeRegistration") {
      const reg = msg.payload;
      if (c.nodeId !== null && c.nodeId !== reg.node_id) {
        refuseRegistration(c, socket, reg.node_id, "already_registered", `this connection is already registered as node ${c.nodeId}`);
        return;
      }
      const auth = opts.nodeAuth.register(reg.node_id, reg, c.remote);
      if (!(auth instanceof Promise)) return admit(c, socket, reg, auth);
      // Checked against the database (PostgreSQL): what the node sends meanwhile waits behind
      // the answer, and reading stops until then.
      c.held = [];
      socket.pause();
      void auth.then((result) => {
        if (!sockets.has(socket)) return;
        admit(c, socket, reg, result);
        release(c, socket);
      });
      return;
    }
    if (c.nodeId === null) {
      reply(c, "not_registered", `${msg.kind} before NodeRegistration; register first`);
      return;
    }
    const claimed = (msg.payload as { node_id?: bigint } | null)?.node_id;
    if (claimed !== undefined && claimed !== c.nodeId && msg.kind !== "PotEvent" && msg.kind !== "PotLog") {
      reply(c, "node_id_mismatch", `${msg.kind} names node ${claimed} but this connection is node ${c.nodeId}`);
      return;
    }
    registry.touch(c.nodeId);
    switch (msg.kind) {
      case "NodeStatusUpdate":
        registry.heartbeat(c.nodeId, msg.payload.health);
        registry.setNodeStatus(c.nodeId, msg.payload.status);
        return;
      case "PotStatusUpdate":
        registry.updatePot(msg.payload);
        return;
      case "PotEvent":
      case "PotLog": {
        const err = ingest.submit({ version: 2, message: { [msg.kind]: msg.payload } }, { transport: "control", remote: c.remote, nodeId: c.nodeId });
        if (err) reply(c, "invalid_event", err);
        return;
      }
      case "NodeEvent":
        ingest.submitNodeEvent(c.nodeId, msg.payload, { transport: "control", remote: c.remote, nodeId: c.nodeId });
        return;
      case "CommandResult":
        opts.onCommandResult(msg.payload);
        return;
      case "SessionRecording": {
        const r = msg.payload;
        const nodeId = c.nodeId;
        const ack = opts.recordings ? opts.recordings.chunk(c, nodeId, r) : { pot_id: r.pot_id, session: r.session, ok: false, message: "this Core does not take recordings" };
        const answer = (ack: SessionRecordingAck | null) => {
          if (!ack) return;
          if (ack.retry_after_ms !== undefined) warn.warn(`${c.remote}:recording-deferred`, { remote: c.remote, node_id: nodeId.toString(), pot_id: r.pot_id, session: r.session, retry_after_ms: ack.retry_after_ms }, `session recording deferred: ${ack.message}`);
          else if (!ack.ok) warn.warn(`${c.remote}:recording`, { remote: c.remote, node_id: nodeId.toString(), pot_id: r.pot_id, session: r.session }, `session recording refused: ${ack.message}`);
          c.link.send("SessionRecordingAck", ack);
        };
        if (ack instanceof Promise) void ack.then(answer);
        else answer(ack);
        return;
      }
      case "FileOffer":
      case "FileChunk": {
        const files = opts.files;
        if (!files) return reply(c, "unsupported", `${msg.kind}: this Core takes no files`);
        const nodeId = c.nodeId;
        const answer = msg.kind === "FileOffer" ? files.offer(nodeId, msg.payload) : files.chunk(nodeId, msg.payload);
        answer.then(
          (status) => {
            if (status.error) warn.warn(`${c.remote}:file:${status.error.code}`, { remote: c.remote, node_id: nodeId.toString(), sha256: status.sha256, code: status.error.code }, `file refused: ${status.error.message}`);
            c.link.send("FileStatus", status);
          },
          (err) => {
            logger.error({ err, node_id: nodeId.toString() }, "file transfer failed");
            c.link.send("FileStatus", { sha256: msg.payload.sha256, offset: 0, complete: false, error: { code: "internal", message: "Core could not store the file; see its log" } });
          },
        );
        return;
      }
      case "NodeDrop":
        logger.info({ node_id: c.nodeId.toString() }, "node said goodbye");
        registry.dropped(c.nodeId, c.link);
        socket.end();
        return;
    }
  };

  const admit = (c: Conn, socket: Socket<Conn>, reg: NodeRegistration, auth: NodeAuthResult) => {
    if (!auth.ok) return refuseRegistration(c, socket, reg.node_id, "unauthenticated", auth.message);
    c.nodeId = reg.node_id;
    registry.register(reg, c.link);
    c.link.send("RegistrationAck", { node_id: reg.node_id, accepted: true, message: auth.totp_key ? "registered and enrolled" : "registered", ...(auth.totp_key ? { totp_key: auth.totp_key } : {}) });
    logger.info({ node_id: reg.node_id.toString(), node_name: reg.node_name, remote: c.remote }, "node registered");
  };

  /** Reads the lines held during a registration's check, then the socket again. */
  const release = (c: Conn, socket: Socket<Conn>) => {
    const held = c.held ?? [];
    c.held = null;
    for (let i = 0; i < held.length; i++) {
      // A held registration that is checked in turn holds the rest behind it.
      if (c.held) return void (c.held as string[]).push(...held.slice(i));
      onLine(c, socket, held[i]!, NO_BYTES, -1);
    }
    if (c.held || (c.paused && ingest.isOverloaded)) return; // the relief resumes it
    c.paused = false;
    socket.resume();
  };

  const scanned = newScannedLine();
  /** One context for every scanned line (this runs on one thread, a line at a time). */
  const ctx: NormaliseContext = { receivedAt: 0, maxAgeMs: ingest.maxEventAgeMs, nodeId: null, nodeProven: true, nodeOfPot: (p) => ingest.nodeOfPot(p), potTypeOf: (n, p) => ingest.potTypeOf(n, p) };

  /** `bytes[at...]` holds the line when it is ASCII (see LineSink), else `at` is -1. */
  const onLine = (c: Conn, socket: Socket<Conn>, text: string, bytes: Buffer, at: number) => {
    if (c.closing) return;
    if (c.held) return void c.held.push(text);
    // A registered node's events (the Go node sends every one as a PotLog) take the fast path.
    if (c.nodeId !== null && scanEnvelopeLine(text, scanned, maxDepth)) {
      ctx.receivedAt = c.lastData;
      ctx.nodeId = c.nodeId;
      const ev = fromScanned(scanned, ctx);
      if (ev) {
        // Touched after the chunk: a Map keyed by a u64 (a heap BigInt) per event showed in profiles.
        c.sawEvent = true;
        return ingest.enqueue(ev, null, scanned, at >= 0 ? bytes : undefined, at);
      }
    }
    if (nestedDeeperThan(text, maxDepth)) {
      const message = `message nested deeper than ${maxDepth} levels (${text.length} bytes); skipped`;
      ingest.reject(null, c.remote, "too_deep", message);
      c.link.send("Error", { code: "too_deep", message });
      return;
    }
    let value: unknown;
    try {
      value = parseWithIds(text);
    } catch {
      // Objects sent back to back are split once; each part is parsed on its own and never
      // split again, so a bad line costs time proportional to its length, once.
      const parts = splitConcatenated(text);
      if (!parts) return reply(c, "bad_json", `message is not valid JSON (${text.length} bytes)`);
      for (const p of parts) onPart(c, socket, p);
      return;
    }
    onMessage(c, socket, value);
  };

  const onPart = (c: Conn, socket: Socket<Conn>, text: string) => {
    if (c.closing) return;
    if (c.held) return void c.held.push(text);
    let value: unknown;
    try {
      value = parseWithIds(text);
    } catch {
      return reply(c, "bad_json", `message is not valid JSON (${text.length} bytes)`);
    }
    onMessage(c, socket, value);
  };

  const onMessage = (c: Conn, socket: Socket<Conn>, value: unknown) => {
    const msg = decodeEnvelope(value, FROM_NODE);
    if (!msg.ok) {
      if ((msg.code === "unsupported_version" || msg.code === "invalid_payload") && isRegistration(value)) {
        const nodeId = toU64((value as any).message?.NodeRegistration?.node_id) ?? 0n;
        return refuseRegistration(c, socket, nodeId, msg.code, msg.message);
      }
      return reply(c, msg.code, msg.message);
    }
    handle(c, socket, msg);
  };

  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: opts.host,
    port: opts.port,
    tls: opts.tls,
    socket: {
      open(socket) {
        const remote = `${socket.remoteAddress}`;
        if (!opts.connections.acquire(remote)) {
          warn.warn(`${remote}:too_many_connections`, { remote }, "too many node connections from one address; refused");
          socket.end(stringify(envelope("Error", { code: "too_many_connections", message: `too many connections from ${remote}` })) + "\n");
          return;
        }
        connections++;
        const writer = new SocketWriter(socket);
        const link: NodeLink = {
          remoteAddress: remote,
          send: (kind, payload) => writer.write(stringify(envelope(kind as any, payload as any)) + "\n"),
          close: (reason) => {
            writer.write(stringify(envelope("Error", { code: "closed", message: reason })) + "\n");
            socket.end();
          },
        };
        socket.data = { splitter: new LineSplitter(opts.maxMessageBytes, { objectEnds: true }), writer, nodeId: null, link, remote, closing: false, ending: false, lastData: Date.now(), sawEvent: false, paused: false, held: null };
        sockets.add(socket);
      },
      data(socket, chunk) {
        const c = socket.data;
        if (!c || c.closing) return;
        c.lastData = Date.now();
        c.splitter.push(chunk, {
          line: (text, bytes, at) => onLine(c, socket, text, bytes, at),
          oversized: (bytes) => reply(c, "message_too_large", `message of ${bytes} bytes exceeds the limit of ${opts.maxMessageBytes} bytes; skipped`),
        });
        if (c.sawEvent && c.nodeId !== null) {
          c.sawEvent = false;
          registry.touch(c.nodeId);
        }
        fair.afterChunk(socket);
      },
      drain(socket) {
        const c = socket.data;
        if (!c) return;
        c.writer.drain();
        if (c.closing && c.writer.pendingBytes === 0) endAfterRefusal(c, socket);
      },
      close(socket) {
        const c = socket.data;
        if (!c || !sockets.delete(socket)) return;
        connections--;
        opts.connections.release(c.remote);
        opts.recordings?.closed(c);
        if (c?.nodeId !== null && c?.nodeId !== undefined) {
          registry.disconnected(c.nodeId, c.link);
          opts.files?.disconnected(c.nodeId);
          logger.info({ node_id: c.nodeId.toString(), remote: c.remote }, "node connection closed");
        }
      },
      error(socket, error) {
        warn.warn(`${socket.data?.remote}:error`, { remote: socket.data?.remote, err: error.message }, "node connection error");
      },
    },
  });

  return {
    get port() {
      return server.port;
    },
    get connections() {
      return connections;
    },
    stop() {
      stopSweep();
      fair.stop();
      server.stop(true);
    },
  };
}

function isRegistration(value: unknown): boolean {
  const m = (value as { message?: unknown })?.message;
  return typeof m === "object" && m !== null && "NodeRegistration" in m;
}
