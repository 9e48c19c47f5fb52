/**
 * Idempotency keys for a cluster's writers (db/pg/event-writer-cluster.ts, `event_keys`): each
 * event is named by who sent it and where it stands in that sender's stream, never by its
 * content. Content said nothing: 200 logins with the same credentials over one keep-alive
 * connection, equal to the millisecond, are 200 events (a content hash kept 57 of them).
 *
 * - A node's spool stream (`StreamTag.spool`, trusted by the event socket only from the node
 *   itself): the spool and the line's position in it. A node sends again, after a reconnect or
 *   to another instance, exactly what it sent before, at the same positions: stored once.
 * - Anything else (senders that never resend: Cowrie's output, a PHP forwarder, the control
 *   channel): this instance's run and the event's number in it. The pipeline re-sends a failed
 *   batch with the keys it was given, and the bus may deliver a message twice: stored once.
 *   The same line sent twice is two numbers, so two events, as on SQLite.
 *
 * A key is hash(sender) + position, mod 2^64: one sender's positions never collide with each
 * other, and two senders collide only if their hashes fall within the span of positions they
 * use, where a hash of every event (as before) collides by the birthday bound.
 */
import type { StreamTag } from "./types";

const TWO_32 = 4294967296;
// A key's 64 bits written as two 32-bit words of a BigInt64Array, in the platform's order
// (the wire format moves the column as it lies in memory).
const LITTLE = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;
const LO = LITTLE ? 0 : 1;
const HI = LITTLE ? 1 : 0;

/** A sender's hash as two 32-bit words. */
interface Base {
  lo: number;
  hi: number;
}

function baseOf(sender: string): Base {
  const h = Bun.hash.wyhash(sender);
  return { lo: Number(h & 0xffffffffn), hi: Number(h >> 32n) };
}

export class SenderKeys {
  private readonly own: Base;
  /** Events of this run without a position of their own, numbered from 1. */
  private ordinal = 0;
  private readonly spools = new WeakMap<StreamTag, Base>();
  // The event before, to tell a line's second object from the next line: a spool line is one
  // event (the node's relay writes one object per line), but a sender may put several on one.
  private lastTag: StreamTag | null = null;
  private lastBase: Base;
  private lastLine = -1;
  private sub = 0;

  /** `instance`: this run of this instance, unique in the cluster (cluster/names.ts `instanceId`). */
  constructor(instance: string) {
    this.own = baseOf(`run:${instance}`);
    this.lastBase = this.own;
  }

  /** Writes the key of an event from `tag` into `words` (a BigInt64Array's words) at event `i`. */
  write(words: Uint32Array, i: number, tag: StreamTag | null): void {
    const spool = tag?.spool;
    let base = this.own;
    let pos: number;
    if (spool === undefined) {
      pos = ++this.ordinal;
      this.lastTag = null;
    } else {
      pos = spool.first + tag!.lineNo;
      if (tag === this.lastTag && tag!.lineNo === this.lastLine) {
        // A further object of the same line: a sender of its own, the line's spool and its rank.
        base = baseOf(`${spool.key}#${++this.sub}`);
      } else {
        if (tag !== this.lastTag) {
          let b = this.spools.get(tag!);
          if (b === undefined) this.spools.set(tag!, (b = baseOf(spool.key)));
          this.lastBase = b;
          this.lastTag = tag;
        }
        this.lastLine = tag!.lineNo;
        this.sub = 0;
        base = this.lastBase;
      }
    }
    const lo = base.lo + (pos % TWO_32);
    // Uint32Array stores wrap mod 2^32: the carry and the high word's overflow need no masks.
    words[2 * i + LO] = lo;
    words[2 * i + HI] = base.hi + Math.floor(pos / TWO_32) + (lo >= TWO_32 ? 1 : 0);
  }
}
