/**
 * Buffered writes for Bun.listen / Bun.connect sockets.
 *
 * `socket.write()` is unbuffered: it may take only part of the data and returns how much it
 * took; the rest must be sent again on `drain`. This keeps the rest, in order, up to a bound:
 * a peer that stops reading is closed rather than allowed to grow our memory.
 */
import type { Socket } from "bun";

export class SocketWriter {
  private queue: Uint8Array[] = [];
  private queued = 0;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly socket: Socket<any>,
    private readonly maxQueuedBytes = 8 * 1024 * 1024,
    private readonly onOverflow: () => void = () => socket.end(),
  ) {}

  get pendingBytes(): number {
    return this.queued;
  }

  /** Writes `data`; returns false if the peer is too far behind and was closed. */
  write(data: string | Uint8Array): boolean {
    const bytes = typeof data === "string" ? this.encoder.encode(data) : data;
    if (this.queue.length === 0) {
      const n = this.socket.write(bytes);
      if (n === bytes.length) return true;
      this.queue.push(bytes.subarray(Math.max(n, 0)));
      this.queued += bytes.length - Math.max(n, 0);
      return true;
    }
    if (this.queued + bytes.length > this.maxQueuedBytes) {
      this.onOverflow();
      return false;
    }
    this.queue.push(bytes);
    this.queued += bytes.length;
    return true;
  }

  /** Call from the socket's `drain` handler. */
  drain(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = this.socket.write(head);
      if (n < head.length) {
        this.queue[0] = head.subarray(Math.max(n, 0));
        this.queued -= Math.max(n, 0);
        return;
      }
      this.queue.shift();
      this.queued -= head.length;
    }
  }
}
