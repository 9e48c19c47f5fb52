/**
 * Fans Protocol v2 messages out to WebSocket clients through Bun's native pub/sub. It tracks
 * which topics have subscribers, so a message is serialised once and only when somebody wants
 * it: the event pipeline pays nothing for the live feed while nobody watches.
 */
import type { Server, ServerWebSocket } from "bun";
import { stringify } from "../../protocol/json";
import { filterMask, messageTopic, subscriptionTopics, type FeedFilter, type FeedKind, type FeedMeta } from "./topics";

export interface Subscriber {
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
}

export class FeedHub {
  private topicRefs = new Map<string, number>();
  /** Which fields each subscribed topic names (see filterMask), for `leave`. */
  private topicMasks = new Map<string, number>();
  /**
   * Per kind with subscribers, the masks its subscribed topics use, with their topic counts
   * (a kind nobody subscribes to is skipped in O(1)): a message is checked
   * against the topics of these masks only (one string for the usual bare-kind subscriber;
   * all eight combinations of an event's fields cost ~1.5 µs per event, measured).
   */
  private kindMasks = new Map<string, Map<number, number>>();
  private servers = new Set<Pick<Server<any>, "publish">>();
  published = 0;

  attach(server: Pick<Server<any>, "publish">): () => void {
    this.servers.add(server);
    return () => this.servers.delete(server);
  }

  /** Subscribes a socket per its filter; returns its topics, to pass to `leave`. */
  join(ws: Subscriber | ServerWebSocket<any>, filter: FeedFilter): string[] {
    const topics = subscriptionTopics(filter);
    const mask = filterMask(filter);
    for (const t of topics) {
      ws.subscribe(t);
      this.topicMasks.set(t, mask);
      this.count(t, mask, 1);
    }
    return topics;
  }

  /** Forgets a closed socket's topics (Bun drops its subscriptions itself). */
  leave(topics: string[]): void {
    for (const t of topics) {
      const mask = this.topicMasks.get(t);
      if (mask === undefined) continue;
      this.count(t, mask, -1);
      if (!this.topicRefs.has(t)) this.topicMasks.delete(t);
    }
  }

  /** Moves a topic's and its kind's mask's subscriber counts; a count of 0 is removed. */
  private count(topic: string, mask: number, delta: 1 | -1): void {
    const kind = topic.split("|", 1)[0]!;
    let masks = this.kindMasks.get(kind);
    if (!masks) this.kindMasks.set(kind, (masks = new Map()));
    move(this.topicRefs, topic, delta);
    move(masks, mask, delta);
    if (masks.size === 0) this.kindMasks.delete(kind);
  }

  wants(kind: string): boolean {
    return this.kindMasks.has(kind);
  }

  /** Publishes a message; `frame` may be given when it is already serialised (from the stream, or by the ingest pipeline). */
  publish(kind: FeedKind, payload: unknown, meta: FeedMeta, frame?: string): void {
    const masks = this.kindMasks.get(kind);
    if (!masks) return;
    let text = frame;
    for (const mask of masks.keys()) {
      const t = messageTopic(kind, meta, mask);
      if (t === null || !this.topicRefs.has(t)) continue;
      text ??= stringify({ version: 2, message: payload === null ? kind : { [kind]: payload } });
      for (const s of this.servers) s.publish(t, text);
      this.published++;
    }
  }
}

function move<K>(counts: Map<K, number>, key: K, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}
