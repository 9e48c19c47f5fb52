/**
 * The message bus: every Protocol v2 message Core emits to the outside (events, status,
 * command results) goes through here. In-process; with several instances src/cluster/bridge.ts
 * carries it over NATS.
 */
import { parseWithIds } from "../protocol/json";
import type { MessageKind } from "../protocol/messages";

/** What a subscriber may filter on, computed once by the publisher. */
export interface BusMeta {
  node_id?: bigint | null;
  pot_id?: string | null;
  event_type?: string | null;
}

/** The protocol's messages, and `PotRemoved` (a registry change other instances apply; not on the feed). */
export type BusKind = MessageKind | "PotRemoved";

export interface BusMessage {
  kind: BusKind;
  payload: unknown;
  meta: BusMeta;
  /**
   * The message as the live feed sends it (`{"version":2,"message":{kind: payload}}`), when the
   * publisher wrote it already (the ingest pipeline's events). Its `payload` is then parsed
   * from it on first access: the feed sends the text and never needs the object.
   */
  frame?: string;
}

export type BusListener = (msg: BusMessage) => void;

export class MessageBus {
  private listeners = new Set<BusListener>();
  private interests = new Map<BusListener, (kind: BusKind) => boolean>();

  /**
   * `interested` tells, cheaply, whether the listener wants a kind right now (the live feed
   * wants events only while a client subscribes to them), so publishers can skip building
   * messages nobody takes.
   */
  subscribe(listener: BusListener, interested?: (kind: BusKind) => boolean): () => void {
    this.listeners.add(listener);
    if (interested) this.interests.set(listener, interested);
    return () => {
      this.listeners.delete(listener);
      this.interests.delete(listener);
    };
  }

  /** Whether any listener may want a message of this kind. */
  wants(kind: BusKind): boolean {
    for (const l of this.listeners) {
      const f = this.interests.get(l);
      if (!f || f(kind)) return true;
    }
    return false;
  }

  publish(kind: BusKind, payload: unknown, meta: BusMeta = {}): void {
    if (this.listeners.size === 0) return;
    const msg = { kind, payload, meta };
    for (const l of this.listeners) l(msg);
  }

  /** Publishes a message given as its feed frame (see BusMessage.frame). */
  publishFrame(kind: BusKind, frame: string, meta: BusMeta): void {
    if (this.listeners.size === 0) return;
    let payload: unknown;
    const msg: BusMessage = {
      kind,
      meta,
      frame,
      get payload() {
        payload ??= (parseWithIds(frame) as { message: Record<string, unknown> }).message[kind];
        return payload;
      },
    };
    for (const l of this.listeners) l(msg);
  }

  get subscriberCount(): number {
    return this.listeners.size;
  }
}
