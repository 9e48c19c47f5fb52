/**
 * How the listeners that feed the pipeline (the event socket, the node control channel) share
 * it among their connections under pressure.
 *
 * At `max_pending_events` (or `max_pending_bytes`) the pipeline is overloaded: every connection
 * stops reading (`socket.pause()`, the kernel's buffers then push back on the senders) until the
 * relief (half of it committed). Left alone below that, the connections whose kernel buffers had
 * grown were read again and again while the others, paused at each overload, got one chunk per
 * relief (measured: of 8 peers blasting over loopback, two were read 5 to 10 times as much as
 * each of the others). So while pending is above half of either bound (the relief mark,
 * `isContended`), a connection that delivered a chunk yields until the next turn of the event loop,
 * when every yielded one resumes, each turn starting from the next connection: one chunk each,
 * in turn.
 */
import type { Socket } from "bun";
import type { Ingest } from "./types";

/** What a listener keeps per connection for this (its socket's `data`). */
export interface Shared {
  /** Reading stopped: overloaded, or yielding its turn. */
  paused: boolean;
}

export interface FairShareOptions<C extends Shared> {
  ingest: Pick<Ingest, "isOverloaded" | "isContended" | "onPressure">;
  /** The listener's open connections. */
  sockets: Set<Socket<C>>;
  /** A connection the listener itself holds paused (a spool waiting for its position) stays so. */
  holds?: (c: C) => boolean;
}

export class FairShare<C extends Shared> {
  private turn = 0;
  private turnScheduled = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly opts: FairShareOptions<C>) {
    this.unsubscribe = opts.ingest.onPressure((overloaded) => {
      if (!overloaded) this.resumePaused();
    });
  }

  /** After a connection's chunk was read: pauses it when the pipeline is overloaded or contended. */
  afterChunk(socket: Socket<C>): void {
    const c = socket.data;
    if (c.paused) return;
    const { ingest, sockets } = this.opts;
    if (ingest.isOverloaded) {
      c.paused = true;
      socket.pause();
    } else if (ingest.isContended && sockets.size > 1) {
      c.paused = true;
      socket.pause();
      if (!this.turnScheduled) {
        this.turnScheduled = true;
        setImmediate(this.resumePaused);
      }
    }
  }

  stop(): void {
    this.unsubscribe();
  }

  private readonly resumePaused = () => {
    this.turnScheduled = false;
    if (this.opts.ingest.isOverloaded) return; // the relief resumes them
    const all = [...this.opts.sockets];
    const from = all.length > 0 ? this.turn++ % all.length : 0;
    for (let k = 0; k < all.length; k++) {
      const s = all[(from + k) % all.length]!;
      if (s.data.paused && !this.opts.holds?.(s.data)) {
        s.data.paused = false;
        s.resume();
      }
    }
  };
}
