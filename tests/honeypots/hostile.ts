/** What the honeypots' hostile-input tests share: raw connections, floods, and the pot's memory. */
import { readFileSync } from "node:fs";
import { createConnection, type Socket } from "node:net";

/** Writes `total` bytes of `chunk`s as fast as the pot takes them; stops early when it closes the connection. */
export async function flood(socket: Socket, chunk: Buffer, total: number): Promise<number> {
  let sent = 0;
  while (sent < total && !socket.destroyed) {
    if (!socket.write(chunk)) await new Promise<void>((resolve) => (socket.once("drain", resolve), socket.once("close", resolve)));
    sent += chunk.length;
  }
  return sent;
}

/**
 * A raw connection, once it is up or already gone (one the pot refuses may be reset before it
 * reports connecting). Its incoming bytes are read and dropped: a socket with bytes unread
 * would never see the pot's end.
 */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port }, () => resolve(socket));
    socket.on("error", () => {});
    socket.resume();
    socket.once("close", () => resolve(socket));
  });
}

export function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => (socket.destroyed ? resolve() : socket.once("close", () => resolve())));
}

/** Resolves once `count` of the sockets have been closed (by the pot). */
export function closedCount(sockets: Socket[], count: number): Promise<number> {
  let n = 0;
  const { promise, resolve } = Promise.withResolvers<number>();
  for (const socket of sockets) {
    void closed(socket).then(() => {
      if (++n >= count) resolve(n);
    });
  }
  return promise;
}

export function rssKb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
}

/** Deterministic bytes that look like nothing in particular. */
export function noise(size: number, seed: number): Buffer {
  const out = Buffer.alloc(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
