/**
 * A TCP listener with the bounds a honeypot facing the whole internet needs: a cap on concurrent
 * connections (beyond it new ones are closed at once, as sshd's MaxStartups drops them), an idle
 * time-out on every socket and, if set, a total one (a slow client that sends a byte a minute
 * holds a slot no longer than that). Stopping closes every open connection, so sessions end with
 * their closed event before the process exits. Warnings are rate-limited: a flood of connections
 * must not become a flood of log lines.
 */
import { createServer, type Socket } from "node:net";
import type { Logger } from "pino";
import { RateLimitedLog } from "../../net/rate-limited-log.ts";
import { parsePositiveInt } from "./config.ts";

export interface ListenOptions {
  name: string;
  host: string;
  port: number;
  maxConnections: number;
  idleMs: number;
  /** A connection's whole life at most; 0 or absent: no limit. */
  totalMs?: number;
  logger: Logger;
}

export interface Listener {
  port: number;
  /** Connections open now. */
  readonly open: number;
  close(): Promise<void>;
}

/**
 * The bounds every kind's manifest sets alike: `listen_address`, `max_connections`,
 * `idle_timeout` and, where it has one, `session_timeout` (both in seconds).
 */
export function listenerBounds(config: Record<string, string>, logger: Logger): Omit<ListenOptions, "name" | "port"> {
  return {
    host: config.listen_address ?? "127.0.0.1",
    maxConnections: parsePositiveInt("max_connections", config.max_connections ?? ""),
    idleMs: parsePositiveInt("idle_timeout", config.idle_timeout ?? "") * 1000,
    totalMs: config.session_timeout ? parsePositiveInt("session_timeout", config.session_timeout) * 1000 : undefined,
    logger,
  };
}

export async function listen(opts: ListenOptions, onSocket: (socket: Socket) => void): Promise<Listener> {
  /** Each open socket and a promise of its 'close', which is when its session's last event is out. */
  const sockets = new Map<Socket, Promise<void>>();
  const warnings = new RateLimitedLog(opts.logger, 1, 60_000);
  let refused = 0;
  const server = createServer((socket) => {
    socket.on("error", () => {});
    if (sockets.size >= opts.maxConnections) {
      refused++;
      warnings.warn("limit", { listener: opts.name, refused, max_connections: opts.maxConnections }, "connection limit reached");
      socket.destroy();
      return;
    }
    const total = opts.totalMs ? setTimeout(() => socket.destroy(), opts.totalMs) : null;
    sockets.set(
      socket,
      new Promise<void>((resolve) =>
        socket.once("close", () => {
          if (total) clearTimeout(total);
          sockets.delete(socket);
          resolve();
        }),
      ),
    );
    socket.setTimeout(opts.idleMs, () => socket.destroy());
    try {
      onSocket(socket);
    } catch (err) {
      warnings.warn("handler", { err, listener: opts.name }, "connection handler failed");
      socket.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", (err) => warnings.warn("listener", { err, listener: opts.name }, "listener error"));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;

  return {
    port,
    get open() {
      return sockets.size;
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const gone = [...sockets.values()];
      for (const socket of sockets.keys()) socket.destroy();
      await Promise.all([closed, ...gone]);
    },
  };
}
