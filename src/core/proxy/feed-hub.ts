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
      this.topicRefs.set(t, (this.topicRefs.get(t) ?? 0) + 1);
      const kind = t.split("|", 1)[0]!;
      this.kindRefs.set(kind, (this.kindRefs.get(kind) ?? 0) + 1);
    }
    return topics;
  }

  /** Forgets a closed socket's topics (Bun drops its subscriptions itself). */
  leave(topics: string[]): void {
    for (const t of topics) {
      const n = (this.topicRefs.get(t) ?? 1) - 1;
      if (n <= 0) this.topicRefs.delete(t);
      else this.topicRefs.set(t, n);
      const kind = t.split("|", 1)[0]!;
      const k = (this.kindRefs.get(kind) ?? 1) - 1;
      if (k <= 0) this.kindRefs.delete(kind);
      else this.kindRefs.set(kind, k);
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
