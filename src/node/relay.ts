/**
 * The local event relay (default 127.0.0.1:9101): the node's honeypots send NDJSON events here.
 * Each accepted line is stamped (event-stamp.ts) and appended to the spool, from where the
 * forwarder sends it to Core. A honeypot written for Core's event socket works here unchanged:
 * if it opens with `EventStreamHello {acks:true}`, it gets `EventAck {seq}` once its events
 * are on disk.
 */
import type { Socket, TCPSocketListener } from "bun";
import type { Logger } from "../log";
import { RateLimitedLog } from "../net/rate-limited-log";
import { SocketWriter } from "../net/socket-writer";
import { LineSplitter, splitConcatenated } from "../protocol/framing";
import { parseWithIds, stringify } from "../protocol/json";
import { envelope } from "../protocol/messages";
import { namedPot, stampEvent } from "./event-stamp";
import type { Spool } from "./spool";

export interface RelayOptions {
  host: string;
  port: number;
  nodeId: bigint;
  maxMessageBytes: number;
  spool: Spool;
  potType(potId: string): string | null;
  /** The pot an unnamed event belongs to when nothing else tells (the only installed pot). */
  onlyPot(): string | null;
  /**
   * Sees each accepted event that belongs to a pot: one installed here, or one it names itself
   * (a honeypot the node relays for; the node ships session recordings from both).
   */
  onEvent?(potId: string, event: Record<string, unknown>): void;
  logger: Logger;
}

export interface RelayCounters {
  accepted: number;
  rejected: number;
  connections: number;
}

export interface RelayHandle {
  readonly port: number;
  readonly counters: RelayCounters;
  /** Events of a pot accepted since the relay started (GetPotMetrics). */
  relayed(potId: string): number;
  stop(): void;
}

interface Conn {
  splitter: LineSplitter;
  writer: SocketWriter;
  /** The pot this connection's events named last: later events without a pot_id are its. */
  pot: string | null;
  acks: boolean;
  lines: number;
  remote: string;
}

export function startRelay(opts: RelayOptions): RelayHandle {
  const { spool, logger } = opts;
  const warn = new RateLimitedLog(logger);
  const counters: RelayCounters = { accepted: 0, rejected: 0, connections: 0 };
  const perPot = new Map<string, number>();

  const reject = (c: Conn, reason: string) => {
    counters.rejected++;
    warn.warn(`reject:${c.remote}`, { remote: c.remote, reason }, "relay dropped a line that is not a JSON object");
  };

  const take = (c: Conn, text: string, out: string[]) => {
    let value: unknown;
    try {
      value = parseWithIds(text);
    } catch {
      const parts = splitConcatenated(text);
      if (!parts) return reject(c, `not JSON (${text.length} bytes)`);
      for (const p of parts) take(c, p, out);
      return;
    }
    const r = stampEvent(value, { nodeId: opts.nodeId, potType: opts.potType, fallbackPot: c.pot ?? opts.onlyPot() });
    if (r.kind === "hello") {
      c.acks = r.acks;
      c.lines = 0;
      return;
    }
    if (r.kind === "rejected") return reject(c, r.reason);
    if (r.potId) {
      c.pot = r.potId;
      perPot.set(r.potId, (perPot.get(r.potId) ?? 0) + 1);
      opts.onEvent?.(r.potId, r.value);
    } else {
      const named = namedPot(r.value);
      if (named) opts.onEvent?.(named, r.value);
    }
    out.push(stringify(r.value));
  };

  const server: TCPSocketListener<Conn> = Bun.listen<Conn>({
    hostname: opts.host,
    port: opts.port,
    socket: {
      open(socket) {
        counters.connections++;
        socket.data = { splitter: new LineSplitter(opts.maxMessageBytes), writer: new SocketWriter(socket), pot: null, acks: false, lines: 0, remote: `${socket.remoteAddress}` };
      },
      data(socket: Socket<Conn>, chunk) {
        const c = socket.data;
        const out: string[] = [];
        const before = c.lines;
        c.splitter.push(chunk, {
          line: (text) => {
            // seq counts lines after the hello, as Core's event socket does.
            c.lines++;
            take(c, text, out);
          },
          oversized: (bytes) => {
            c.lines++;
            reject(c, `line of ${bytes} bytes exceeds ${opts.maxMessageBytes}`);
          },
        });
        flush(out);
        if (c.acks && c.lines > before) c.writer.write(stringify(envelope("EventAck", { seq: c.lines })) + "\n");
      },
      drain(socket) {
        socket.data.writer.drain();
      },
      close(socket) {
        counters.connections--;
        const c = socket.data;
        if (!c) return;
        const out: string[] = [];
        c.splitter.end({ line: (text) => take(c, text, out), oversized: () => reject(c, "oversized last line") });
        flush(out);
      },
      error(socket, error) {
        logger.debug({ remote: socket.data?.remote, err: error.message }, "relay connection error");
      },
    },
  });

  const flush = (out: string[]) => {
    if (out.length === 0) return;
    spool.append(out);
    counters.accepted += out.length;
  };

  return {
    get port() {
      return server.port;
    },
    counters,
    relayed: (potId) => perPot.get(potId) ?? 0,
    stop() {
      server.stop(true);
    },
  };
}
