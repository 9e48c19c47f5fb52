/**
 * A TCP listener with the bounds a honeypot facing the whole internet needs: a cap on concurrent
 * connections (beyond it new ones are closed at once, as sshd's MaxStartups drops them) and an idle
 * time-out on every socket. Stopping closes every open connection, so sessions end with their
 * closed event before the process exits.
 */
import { createServer, type Socket } from "node:net";
import type { Logger } from "pino";

export interface ListenOptions {
  name: string;
  host: string;
  port: number;
  maxConnections: number;
  idleMs: number;
  logger: Logger;
}

export interface Listener {
  port: number;
  close(): Promise<void>;
}

export async function listen(opts: ListenOptions, onSocket: (socket: Socket) => void): Promise<Listener> {
  /** Each open socket and a promise of its 'close', which is when its session's last event is out. */
  const sockets = new Map<Socket, Promise<void>>();
  let refused = 0;
  const server = createServer((socket) => {
    socket.on("error", () => {});
    if (sockets.size >= opts.maxConnections) {
      if (refused++ % 1000 === 0) opts.logger.warn({ listener: opts.name, refused }, "connection limit reached");
      socket.destroy();
      return;
    }
    sockets.set(socket, new Promise<void>((resolve) => socket.once("close", () => {
      sockets.delete(socket);
      resolve();
    })));
    socket.setTimeout(opts.idleMs, () => socket.destroy());
    try {
      onSocket(socket);
    } catch (err) {
      opts.logger.error({ err, listener: opts.name }, "connection handler failed");
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
  server.on("error", (err) => opts.logger.error({ err, listener: opts.name }, "listener error"));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;

  return {
    port,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const gone = [...sockets.values()];
      for (const socket of sockets.keys()) socket.destroy();
      await Promise.all([closed, ...gone]);
    },
  };
}
