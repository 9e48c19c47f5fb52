/**
 * Webhook output: a POST per batch. A 2xx answer delivers the batch; anything else (or no
 * answer within timeout_ms) fails it and the reader retries: at least once. Each request
 * carries `X-HoneyBee-Delivery` (output name and the batch's first and last event ids, the
 * same on a retry) for receivers that drop repeats, and with a secret an HMAC-SHA256
 * signature of the body.
 */
import { createHmac } from "node:crypto";
import { stringify } from "../../protocol/json";
import type { OutEvent } from "./event";
import { jsonBody, slackBody, teamsBody } from "./format/chat";
import type { WebhookOutput } from "./model";
import type { Sink } from "./sink";

export const SIGNATURE_HEADER = "x-honeybee-signature-256";

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

export function webhookBody(def: Pick<WebhookOutput, "name" | "preset">, events: OutEvent[]): string {
  if (def.preset === "slack") return JSON.stringify(slackBody(events));
  if (def.preset === "teams") return JSON.stringify(teamsBody(events));
  return stringify(jsonBody(def.name, events));
}

export function webhookSink(def: WebhookOutput): Sink {
  const inFlight = new Set<AbortController>();
  return {
    async send(events) {
      const body = webhookBody(def, events);
      const headers: Record<string, string> = {
        ...def.headers,
        "content-type": "application/json",
        "user-agent": "HoneyBee-Core",
        "x-honeybee-delivery": `${def.name}:${events[0]!.id}-${events[events.length - 1]!.id}`,
      };
      if (def.secret) headers[SIGNATURE_HEADER] = signature(def.secret, body);
      const abort = new AbortController();
      inFlight.add(abort);
      const timer = setTimeout(() => abort.abort(new Error(`no answer within ${def.timeout_ms} ms`)), def.timeout_ms ?? 10_000);
      try {
        const res = await fetch(def.url, { method: "POST", headers, body, signal: abort.signal, redirect: "error" });
        const text = await res.text().catch(() => "");
        if (!res.ok) throw new Error(`HTTP ${res.status} from ${new URL(def.url).host}: ${text.slice(0, 200)}`);
      } catch (e) {
        const reason = abort.signal.aborted ? abort.signal.reason : e;
        throw reason instanceof Error ? reason : new Error(String(reason));
      } finally {
        clearTimeout(timer);
        inFlight.delete(abort);
      }
    },
    async close() {
      for (const a of inFlight) a.abort(new Error("output stopped"));
    },
  };
}
