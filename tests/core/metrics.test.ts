import { describe, expect, test } from "bun:test";
// A parser of the Prometheus text exposition format, independent of the library that writes it.
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { sha256 } from "../../src/core/auth";
import { EventStreamClient, WsClient, getJson, registerNode, startTestCore, type TestCore } from "../helpers";

type Family = { name: string; type: string; help: string; metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[] };

async function scrape(core: TestCore, headers: Record<string, string> = {}): Promise<Map<string, Family>> {
  const res = await fetch(`${core.api}/metrics`, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  const families = parsePrometheusTextFormat(await res.text()) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}

const value = (m: Map<string, Family>, name: string, labels: Record<string, string> = {}) =>
  Number(m.get(name)?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v))?.value);

describe("GET /metrics", () => {
  test("Prometheus text format: events by type and rejection code, batches, lag, WebSocket clients, nodes by status", async () => {
    await using core = await startTestCore();
    const node = await registerNode(core);
    using _feed = await WsClient.connect(core.ws); // counted while open
    {
      using c = await EventStreamClient.connect(core.ports.event, { acks: true });
      c.send(['{"eventid":"cowrie.login.failed","src_ip":"8.8.8.8"}', '{"eventid":"cowrie.login.failed","src_ip":"8.8.8.8"}', '{"eventid":"cowrie.session.connect","src_ip":"8.8.8.8"}', "not json", '{"a":1}']);
      await c.ack(5);
    }
    const m = await scrape(core);
    expect(m.get("honeybee_events_committed_total")!.type).toBe("COUNTER");
    expect(value(m, "honeybee_events_received_total")).toBe(5);
    expect(value(m, "honeybee_events_committed_total")).toBe(3);
    expect(value(m, "honeybee_events_committed_by_type_total", { event_type: "cowrie.login.failed" })).toBe(2);
    expect(value(m, "honeybee_events_committed_by_type_total", { event_type: "cowrie.session.connect" })).toBe(1);
    expect(value(m, "honeybee_events_rejected_total", { code: "bad_json" })).toBe(1);
    expect(value(m, "honeybee_events_rejected_total", { code: "invalid_event" })).toBe(1);
    expect(value(m, "honeybee_ingest_pending_events")).toBe(0);
    expect(value(m, "honeybee_websocket_clients")).toBe(1);
    expect(value(m, "honeybee_websocket_cutoffs_total")).toBe(0);
    expect(m.get("honeybee_nodes")!.metrics).toEqual([{ labels: { status: "Connected" }, value: "1" }]);
    const batches = m.get("honeybee_ingest_batch_events")!;
    expect(batches.type).toBe("HISTOGRAM");
    expect(Number(batches.metrics[0]!.count)).toBeGreaterThanOrEqual(1);
    const lag = m.get("honeybee_ingest_lag_seconds")!.metrics[0]!;
    expect(Number(lag.buckets!["+Inf"])).toBe(Number(lag.count));
    expect(value(m, "honeybee_process_resident_memory_bytes")).toBeGreaterThan(0);
    node.close();
  });

  test("each output's lag, deliveries and failures", async () => {
    const received: unknown[] = [];
    using hook = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (req) => (received.push(await req.json()), new Response("ok")) });
    await using core = await startTestCore({ outputs: [{ name: "hook", type: "webhook", url: `http://127.0.0.1:${hook.port}/` }] });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send(['{"eventid":"cowrie.login.failed","src_ip":"8.8.8.8"}', '{"eventid":"cowrie.session.connect","src_ip":"8.8.8.8"}']);
    await c.ack(2);
    let m = await scrape(core);
    for (let i = 0; i < 500 && value(m, "honeybee_output_delivered_total", { output: "hook" }) !== 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
      m = await scrape(core);
    }
    expect(value(m, "honeybee_output_delivered_total", { output: "hook" })).toBe(2);
    expect(value(m, "honeybee_output_lag_events", { output: "hook" })).toBe(0);
    expect(value(m, "honeybee_output_failed_total", { output: "hook" })).toBe(0);
    expect(m.get("honeybee_output_lag_events")!.type).toBe("GAUGE");
    expect(m.get("honeybee_output_delivered_total")!.type).toBe("COUNTER");
  });

  test("loopback scrapes are never rate-limited, even with loopback counted; with tokens, the read role is needed", async () => {
    const READ = "hb_read_token_for_metrics_0123456";
    await using core = await startTestCore({ api_rate_per_minute: 2, api_rate_limit_loopback: true, tokens: [{ name: "prometheus", role: "read", sha256: sha256(READ) }] });
    const auth = { authorization: `Bearer ${READ}` };
    expect((await fetch(`${core.api}/metrics`)).status).toBe(401);
    for (let i = 0; i < 5; i++) await scrape(core, auth);
    // Other requests from the same address are limited as before.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await getJson(`${core.api}/api/v1/stats`, { headers: auth })).status);
    expect(statuses).toContain(429);
  });
});
