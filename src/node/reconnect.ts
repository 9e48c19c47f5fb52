/**
 * A TCP client that keeps itself connected: NDJSON lines in, buffered writes out, reconnecting
 * with backoff when the peer is away. The control link and the event forwarder are both built
 * on it; each resets the backoff only when the peer has proven useful (an accepted
 * registration, an ack), so a peer that accepts and drops at once still gets backed off.
 *
 * Several addresses (Core instances) are tried round-robin: a lost or refused address is
 * followed at once by the next, and the backoff delay comes only after a full round has failed,
 * so a node fails over in one connect time rather than one backoff step.
 */
import type { Socket } from "bun";
import type { Logger } from "../log";
import { LineSplitter } from "../protocol/framing";
import { SocketWriter } from "../net/socket-writer";
import { Backoff } from "./backoff";
import type { Address } from "./config";
import type { ClientTls } from "./tls";

export interface LineConnection {
  /** Queues text; false when the peer is too far behind and the connection was closed. */
  write(text: string): boolean;
  readonly pendingBytes: number;
  readonly localAddress: string;
  /** Position in `addresses` of the peer this connection goes to. */
  readonly peer: number;
  end(): void;
}

/** Where a reconnecting client connects, and how patiently. */
export interface PeerOptions {
  /** Tried in order, round-robin; one for a single Core. */
  addresses: Address[];
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
  /**
   * Where to go after a failure when another part decides it (the event forwarder stays with
   * the Core the control link is registered with): an address to retry after a backoff delay,
   * "wait" to stay away until moveTo, or null for the next address round-robin.
   */
  follow?(): number | "wait" | null;
  /**
   * Milliseconds before an attempt could succeed (0: now): a node that has spent every TOTP
   * code Core would take before the next step waits for it rather than be refused.
   */
  readyIn?(): number;
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
  /** Connects to `addresses[peer]` now, dropping a connection to another one. */
  moveTo(peer: number): void;
  /** Stops reconnecting; lets queued writes reach the peer, then closes. */
  stop(flushTimeoutMs?: number): Promise<void>;
}

/** HOST:PORT as written in the configuration (IPv6 in brackets). */
export const formatAddress = (a: Address): string => (a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`);

interface Conn extends LineConnection {
  splitter: LineSplitter;
  writer: SocketWriter;
  closed: PromiseWithResolvers<void>;
  drained: (() => void)[];
  /** The attempt that made it: a connection replaced by moveTo no longer drives reconnecting. */
  attempt: number;
  opened: boolean;
}

export function startReconnecting(opts: ReconnectOptions): ReconnectHandle {
  const { logger } = opts;
  const backoff = new Backoff(opts.reconnectMinMs, opts.reconnectMaxMs);
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let current: Conn | null = null;
  let attempt = 0;
  const count = opts.addresses.length;
  if (count === 0) throw new Error("no address to connect to");
  /** The address of the current or next attempt. */
  let peer = 0;
  /** Addresses that failed in a row since the last backoff delay or useful peer. */
  let failures = 0;
  /** reconnect() asked for the same peer again, not the next one. */
  let again = false;
  /** Not connecting until moveTo says where (follow() said "wait"). */
  let waiting = false;

  const later = (delay: number) => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = null;
      void connect();
    }, delay);
  };

  const schedule = () => {
    if (stopped || timer) return;
    const delay = backoff.next();
    logger.debug({ delay_ms: delay, attempt: backoff.attempts, peer: formatAddress(opts.addresses[peer]!) }, "reconnecting later");
    later(delay);
  };

  /** The attempt on `peer` failed (refused, dropped, lost): next address now, or back off after a full round. */
  const failed = () => {
    if (stopped) return;
    if (again) {
      again = false;
      return schedule();
    }
    const followed = opts.follow?.() ?? null;
    if (followed === "wait") {
      waiting = true;
      return;
    }
    if (followed !== null) {
      peer = followed;
      return schedule();
    }
    peer = (peer + 1) % count;
    if (++failures < count) return later(0);
    failures = 0;
    schedule();
  };

  const connect = async () => {
    // Counted even when deferred: a connection replaced meanwhile no longer drives reconnecting.
    const mine = ++attempt;
    const wait = opts.readyIn?.() ?? 0;
    if (wait > 0) {
      logger.debug({ delay_ms: wait, peer: formatAddress(opts.addresses[peer]!) }, "no fresh TOTP code before the next step; connecting then");
      return later(wait);
    }
    const at = peer;
    const address = opts.addresses[at]!;
    try {
      await Bun.connect<Conn>({
        hostname: address.host,
        port: address.port,
        tls: opts.tls ? { ...opts.tls, serverName: address.host } : undefined,
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
              peer: at,
              end: () => socket.end(),
              attempt: mine,
              opened: false,
            };
            socket.data = conn;
            if (stopped || mine !== attempt) return void socket.end();
            current = conn;
            conn.opened = true;
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
            if (conn.opened) opts.onClose(conn);
            if (conn.attempt === attempt) failed();
          },
          error(_socket, error) {
            logger.debug({ err: error.message }, "connection error");
          },
        },
      });
    } catch (e) {
      if (mine !== attempt || stopped) return;
      logger.debug({ peer: formatAddress(address), err: (e as Error).message }, "connect failed");
      failed();
    }
  };

  void connect();

  return {
    get connection() {
      return current;
    },
    resetBackoff: () => {
      backoff.reset();
      failures = 0;
    },
    reconnect() {
      again = true;
      if (current) current.end();
      else schedule();
    },
    moveTo(to) {
      if (stopped || to < 0 || to >= count) return;
      if (current?.peer === to) return;
      if (!current && !timer && !waiting && peer === to) return; // already connecting there
      waiting = false;
      if (timer) clearTimeout(timer);
      timer = null;
      const old = current;
      current = null;
      peer = to;
      failures = 0;
      void connect();
      old?.end();
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
