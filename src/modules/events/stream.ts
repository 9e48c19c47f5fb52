/**
 * The backend stream, `GET /api/v1/stream` (WebSocket): the same live feed as the proxy, for
 * a proxy running as its own process (`honeybee proxy --backend ws://core:9002`). Read-only;
 * commands go through the proxy or REST.
 */
import { Elysia } from "elysia";
import type { FeedHub } from "../../core/proxy/feed-hub";
import { errorFrame } from "../../core/proxy/server";
import { parseFeedFilter } from "../../core/proxy/topics";

export const streamApi = (hub: FeedHub) => {
  const topics = new WeakMap<object, string[]>();
  return new Elysia({ name: "stream" }).ws("/api/v1/stream", {
    detail: { hide: true },
    open(ws) {
      const parsed = parseFeedFilter(new URL(ws.data.request.url).searchParams);
      if (!parsed.ok) {
        ws.send(errorFrame("bad_request", parsed.message));
        ws.close(1008, "bad filter");
        return;
      }
      topics.set(ws.raw, hub.join(ws.raw, parsed.filter));
    },
    message(ws) {
      ws.send(errorFrame("read_only", "the backend stream is read-only; send commands to the WebSocket proxy or POST /api/v1/nodes/{node_id}/commands"));
    },
    close(ws) {
      hub.leave(topics.get(ws.raw) ?? []);
    },
  });
};
