/**
 * The node control channel (TCP, Protocol v2, one JSON message per line, both directions).
 *
 * A connection must open with NodeRegistration; everything it sends afterwards is about that
 * node. A bad message is answered with an `Error` message and skipped; it never affects other
 * connections. Buffers are bounded by `maxMessageBytes` per message and a write queue per peer.
 * PotEvent and PotLog feed the event pipeline like the event socket does, with the same
 * backpressure: while the pipeline is overloaded, connections stop reading.
 */
import type { Socket, TCPSocketListener } from "bun";
import type { Logger } from "../log";
import { LineSplitter, splitConcatenated } from "../protocol/framing";
import { nestedDeeperThan } from "../protocol/depth";
import { parseWithIds, stringify } from "../protocol/json";
import { decodeEnvelope, envelope, type CommandResult, type Decoded } from "../protocol/messages";
import { RateLimitedLog } from "../net/rate-limited-log";
import { SocketWriter } from "../net/socket-writer";
import type { Ingest } from "./ingest/types";
import type { NodeLink, Registry } from "./registry";
import type { ConnectionCounter } from "./auth/rate-limit";
import type { NodeAuth } from "./auth/node-auth";
import type { TlsOptions } from "./tls";

const FROM_NODE = new Set(["NodeRegistration", "NodeStatusUpdate", "PotStatusUpdate", "PotEvent", "PotLog", "NodeEvent", "CommandResult", "NodeDrop"]);

export interface NodeChannelOptions {
  host: string;
  port: number;
  maxMessageBytes: number;
  /** Deepest nesting of a message (`max_nesting_depth`); deeper ones are refused unparsed. */
  maxNestingDepth?: number;
  registry: Registry;
  ingest: Ingest;
  onCommandResult: (result: CommandResult) => void;
  connections: ConnectionCounter;
  nodeAuth: NodeAuth;
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
  /** Reading stopped while the event pipeline is overloaded. */
  paused: boolean;
}

export function startNodeChannel(opts: NodeChannelOptions): NodeChannelHandle {
  const { registry, ingest, logger } = opts;
  const warn = new RateLimitedLog(logger);
  const maxDepth = opts.maxNestingDepth ?? 64;
  let connections = 0;
  const sockets = new Set<Socket<Conn>>();
  const unsubscribe = ingest.onPressure((overloaded) => {
    if (overloaded) return;
    for (const s of sockets) {
      if (s.data.paused) {
        s.data.paused = false;
        s.resume();
      }
    }
  });

  const reply = (c: Conn, code: string, message: string) => {
    warn.warn(`${c.remote}:${code}`, { remote: c.remote, node_id: c.nodeId?.toString(), code }, message);
    c.link.send("Error", { code, message });
  };

  const handle = (c: Conn, socket: Socket<Conn>, msg: Decoded) => {
    if (msg.kind === "NodeRegistration") {
      const reg = msg.payload;
      if (c.nodeId !== null && c.nodeId !== reg.node_id) {
        c.link.send("RegistrationAck", { node_id: reg.node_id, accepted: false, message: `this connection is already registered as node ${c.nodeId}` });
        return;
      }
      const auth = opts.nodeAuth.register(reg.node_id, reg, c.remote);
      if (!auth.ok) {
        warn.warn(`${c.remote}:registration`, { remote: c.remote, node_id: reg.node_id.toString() }, `registration refused: ${auth.message}`);
        c.link.send("RegistrationAck", { node_id: reg.node_id, accepted: false, message: auth.message });
        socket.end();
        return;
      }
      c.nodeId = reg.node_id;
      registry.register(reg, c.link);
      c.link.send("RegistrationAck", { node_id: reg.node_id, accepted: true, message: auth.totp_key ? "registered and enrolled" : "registered", ...(auth.totp_key ? { totp_key: auth.totp_key } : {}) });
      logger.info({ node_id: reg.node_id.toString(), node_name: reg.node_name, remote: c.remote }, "node registered");
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
      case "NodeDrop":
        logger.info({ node_id: c.nodeId.toString() }, "node said goodbye");
        registry.dropped(c.nodeId, c.link);
        socket.end();
        return;
    }
  };

  const onLine = (c: Conn, socket: Socket<Conn>, text: string) => {
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
      const parts = splitConcatenated(text);
      if (!parts) return reply(c, "bad_json", `message is not valid JSON (${text.length} bytes)`);
      for (const p of parts) onLine(c, socket, p);
      return;
    }
    const msg = decodeEnvelope(value, FROM_NODE);
    if (!msg.ok) {
      if (msg.code === "unsupported_version" && isRegistration(value)) {
        const nodeId = (value as any).message?.NodeRegistration?.node_id;
        c.link.send("RegistrationAck", { node_id: typeof nodeId === "bigint" ? nodeId : 0n, accepted: false, message: msg.message });
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
          logger.warn({ remote }, "too many node connections from one address; refused");
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
        socket.data = { splitter: new LineSplitter(opts.maxMessageBytes), writer, nodeId: null, link, remote, paused: false };
        sockets.add(socket);
      },
      data(socket, chunk) {
        const c = socket.data;
        if (!c) return;
        c.splitter.push(chunk, {
          line: (text) => onLine(c, socket, text),
          oversized: (bytes) => reply(c, "message_too_large", `message of ${bytes} bytes exceeds the limit of ${opts.maxMessageBytes} bytes; skipped`),
        });
        if (ingest.isOverloaded && !c.paused) {
          c.paused = true;
          socket.pause();
        }
      },
      drain(socket) {
        socket.data.writer.drain();
      },
      close(socket) {
        const c = socket.data;
        if (!c) return;
        sockets.delete(socket);
        connections--;
        opts.connections.release(c.remote);
        if (c?.nodeId !== null && c?.nodeId !== undefined) {
          registry.disconnected(c.nodeId, c.link);
          logger.info({ node_id: c.nodeId.toString(), remote: c.remote }, "node connection closed");
        }
      },
      error(socket, error) {
        logger.warn({ remote: socket.data?.remote, err: error.message }, "node connection error");
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
      unsubscribe();
      server.stop(true);
    },
  };
}

function isRegistration(value: unknown): boolean {
  const m = (value as { message?: unknown })?.message;
  return typeof m === "object" && m !== null && "NodeRegistration" in m;
}
