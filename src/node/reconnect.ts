/**
 * A TCP client that keeps itself connected: NDJSON lines in, buffered writes out, reconnecting
 * with backoff when the peer is away. The control link and the event forwarder are both built
 * on it; each resets the backoff only when the peer has proven useful (an accepted
 * registration, an ack), so a peer that accepts and drops at once still gets backed off.
 */
import type { Socket } from "bun";
import type { Logger } from "../log";
import { LineSplitter } from "../protocol/framing";
import { SocketWriter } from "../net/socket-writer";
import { Backoff } from "./backoff";
import type { ClientTls } from "./tls";

export interface LineConnection {
  /** Queues text; false when the peer is too far behind and the connection was closed. */
  write(text: string): boolean;
  readonly pendingBytes: number;
  readonly localAddress: string;
  end(): void;
}

/** Where a reconnecting client connects, and how patiently. */
export interface PeerOptions {
  host: string;
  port: number;
  reconnectMinMs: number;
  reconnectMaxMs: number;
  maxMessageBytes: number;
  /** TLS towards Core: the CA to verify it with, and a client certificate for mutual TLS. */
  tls?: ClientTls;
  logger: Logger;
}

export interface ReconnectOptions extends PeerOptions {
  /** Bytes queued for a slow peer before the connection is dropped and retried. */
  maxQueuedBytes?: number;
  onOpen(conn: LineConnection): void;
  onLine(text: string, conn: LineConnection): void;
  onClose(conn: LineConnection): void;
  /** The write queue emptied: room to send more. */
  onDrain?(conn: LineConnection): void;
}

export interface ReconnectHandle {
  readonly connection: LineConnection | null;
  /** The peer proved useful (accepted us, acknowledged something): next failure starts small. */
  resetBackoff(): void;
  /** Drops the current connection (if any) and connects again after a backoff delay. */
  reconnect(): void;
  /** Stops reconnecting; lets queued writes reach the peer, then closes. */
  stop(flushTimeoutMs?: number): Promise<void>;
}

interface Conn extends LineConnection {
  splitter: LineSplitter;
  writer: SocketWriter;
  closed: PromiseWithResolvers<void>;
  drained: (() => void)[];
}

export function startReconnecting(opts: ReconnectOptions): ReconnectHandle {
  const { logger } = opts;
  const backoff = new Backoff(opts.reconnectMinMs, opts.reconnectMaxMs);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Conn | null = null;
  let attempt = 0;

  const schedule = () => {
    if (stopped || timer) return;
    const delay = backoff.next();
    logger.debug({ delay_ms: delay, attempt: backoff.attempts }, "reconnecting later");
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delay);
  };

  const connect = async () => {
    const mine = ++attempt;
    try {
      await Bun.connect<Conn>({
        hostname: opts.host,
        port: opts.port,
        tls: opts.tls ? { ...opts.tls, serverName: opts.host } : undefined,
        socket: {
          open(socket) {
            const writer = new SocketWriter(socket, opts.maxQueuedBytes ?? 64 * 1024 * 1024);
            const conn: Conn = {
              splitter: new LineSplitter(opts.maxMessageBytes),
              writer,
              closed: Promise.withResolvers<void>(),
              drained: [],
              write: (text) => writer.write(text),
              get pendingBytes() {
                return writer.pendingBytes;
              },
              localAddress: (socket as Socket<Conn> & { localAddress?: string }).localAddress ?? "",
              end: () => socket.end(),
            };
            socket.data = conn;
            if (stopped) return void socket.end();
            current = conn;
            opts.onOpen(conn);
          },
          data(socket, chunk) {
            const conn = socket.data;
            conn.splitter.push(chunk, {
              line: (text) => opts.onLine(text, conn),
              oversized: (bytes) => logger.warn({ bytes }, "skipped an oversized message from the peer"),
            });
          },
          drain(socket) {
            const conn = socket.data;
            conn.writer.drain();
            if (conn.writer.pendingBytes > 0) return;
            for (const resolve of conn.drained.splice(0)) resolve();
            opts.onDrain?.(conn);
          },
          close(socket) {
            const conn = socket.data;
            if (!conn) return;
            conn.closed.resolve();
            for (const resolve of conn.drained.splice(0)) resolve();
            if (current === conn) current = null;
            opts.onClose(conn);
            schedule();
          },
          error(_socket, error) {
            logger.debug({ err: error.message }, "connection error");
          },
        },
      });
    } catch (e) {
      if (mine !== attempt || stopped) return;
      logger.debug({ host: opts.host, port: opts.port, err: (e as Error).message }, "connect failed");
      schedule();
    }
  };

  void connect();

  return {
    get connection() {
      return current;
    },
    resetBackoff: () => backoff.reset(),
    reconnect() {
      if (current) current.end();
      else schedule();
    },
    async stop(flushTimeoutMs = 2000) {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const conn = current;
      if (!conn) return;
      let timeout: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<void>((resolve) => (timeout = setTimeout(resolve, flushTimeoutMs)));
      // SocketWriter sends its queue only on `drain`; wait for that rather than cut the tail off.
      if (conn.writer.pendingBytes > 0) await Promise.race([new Promise<void>((resolve) => conn.drained.push(resolve)), expired]);
      conn.end();
      await Promise.race([conn.closed.promise, expired]);
      clearTimeout(timeout);
    },
  };
}
