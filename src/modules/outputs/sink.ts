/** What every output type implements: deliver a batch within its guarantee (docs/outputs.md). */
import type { OutEvent } from "./event";

export interface Sink {
  /** Resolves once the batch is delivered; rejects (with a message saying why) when it is not. */
  send(events: OutEvent[]): Promise<void>;
  /** Closes connections and files; a `send` in progress rejects. */
  close(): Promise<void>;
}

/** Fills `{event_type}`, `{pot_id}`, `{pot_type}`, `{node_id}` in a topic or subject; `clean` makes a value safe there. */
export function fillTemplate(template: string, e: OutEvent, clean: (s: string) => string): string {
  return template.replace(/\{(event_type|pot_id|pot_type|node_id)\}/g, (_, k: string) => {
    const v = k === "node_id" ? e.node_id?.toString() : (e as unknown as Record<string, string | null>)[k];
    return clean(v ?? "unknown");
  });
}

/** Rejects with `message` after `ms` unless `p` settles first. */
export function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(message)), ms)))]).finally(() => clearTimeout(timer));
}
