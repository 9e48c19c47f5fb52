/**
 * Fans Protocol v2 messages out to WebSocket clients through Bun's native pub/sub. It tracks
 * which topics have subscribers, so a message is serialised once and only when somebody wants
 * it: the event pipeline pays nothing for the live feed while nobody watches.
 */
import type { Server, ServerWebSocket } from "bun";
import { stringify } from "../../protocol/json";
import { messageTopics, subscriptionTopics, type FeedFilter, type FeedKind, type FeedMeta } from "./topics";

export interface Subscriber {
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
}

export class FeedHub {
  private topicRefs = new Map<string, number>();
  /** Subscribed topics per kind, to skip a kind with no subscribers in O(1). */
  private kindRefs = new Map<string, number>();
  private servers = new Set<Pick<Server<any>, "publish">>();
  published = 0;

  attach(server: Pick<Server<any>, "publish">): () => void {
    this.servers.add(server);
    return () => this.servers.delete(server);
  }

  /** Subscribes a socket per its filter; returns its topics, to pass to `leave`. */
  join(ws: Subscriber | ServerWebSocket<any>, filter: FeedFilter): string[] {
    const topics = subscriptionTopics(filter);
    for (const t of topics) {
      ws.subscribe(t);
      this.count(t, 1);
    }
    return topics;
  }

  /** Forgets a closed socket's topics (Bun drops its subscriptions itself). */
  leave(topics: string[]): void {
    for (const t of topics) this.count(t, -1);
  }

  /** Moves a topic's and its kind's subscriber counts; a count of 0 is removed. */
  private count(topic: string, delta: 1 | -1): void {
    for (const [map, key] of [
      [this.topicRefs, topic],
      [this.kindRefs, topic.split("|", 1)[0]!],
    ] as const) {
      const n = (map.get(key) ?? 0) + delta;
      if (n <= 0) map.delete(key);
      else map.set(key, n);
    }
  }

  wants(kind: string): boolean {
    return this.kindRefs.has(kind);
  }

  /** Publishes a message; `frame` may be given when it is already serialised (from the stream). */
  publish(kind: FeedKind, payload: unknown, meta: FeedMeta, frame?: string): void {
    if (!this.kindRefs.has(kind)) return;
    let text = frame;
    for (const t of messageTopics(kind, meta)) {
      if (!this.topicRefs.has(t)) continue;
      text ??= stringify({ version: 2, message: payload === null ? kind : { [kind]: payload } });
      for (const s of this.servers) s.publish(t, text);
      this.published++;
    }
  }
}
