/**
 * The live feed: Core's backend stream `GET /api/v1/stream` (WebSocket) on the console's own
 * origin, so no other port has to be reachable. Reconnects with capped backoff; messages are
 * handed over raw and parsed by the listener, which may drop them unread.
 */
import { parseJson, token } from "./api";

export type FeedState = "connecting" | "open" | "closed";

export interface FeedOptions {
  kinds: string[];
  node_id?: string;
  pot_id?: string;
  event_type?: string;
  onMessage: (kind: string, payload: any) => void;
  onState?: (s: FeedState, why?: string) => void;
}

/** `{"version":2,"message":{"PotEvent":{...}}}` -> ["PotEvent", {...}] */
export function decodeFrame(text: string): [string, any] | null {
  try {
    const m = parseJson(text)?.message;
    if (typeof m === "string") return [m, null];
    if (m && typeof m === "object") {
      const kind = Object.keys(m)[0];
      if (kind) return [kind, m[kind]];
    }
  } catch {}
  return null;
}

export function openFeed(o: FeedOptions): () => void {
  let ws: WebSocket | null = null;
  let stopped = false;
  let delay = 500;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const connect = () => {
    const q = new URLSearchParams({ kinds: o.kinds.join(",") });
    if (o.node_id) q.set("node_id", o.node_id);
    if (o.pot_id) q.set("pot_id", o.pot_id);
    if (o.event_type) q.set("event_type", o.event_type);
    // A browser's WebSocket cannot send headers; Core takes the token in the query on upgrades only.
    const t = token.get();
    if (t) q.set("token", t);
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    o.onState?.("connecting");
    ws = new WebSocket(`${scheme}//${location.host}/api/v1/stream?${q}`);
    ws.onopen = () => {
      delay = 500;
      o.onState?.("open");
    };
    ws.onmessage = (m) => {
      const f = decodeFrame(m.data as string);
      if (f) o.onMessage(f[0], f[1]);
    };
    ws.onclose = (e) => {
      ws = null;
      if (stopped) return;
      o.onState?.("closed", e.reason || undefined);
      timer = setTimeout(connect, delay);
      delay = Math.min(delay * 2, 10_000);
    };
  };
  connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    ws?.close();
  };
}
