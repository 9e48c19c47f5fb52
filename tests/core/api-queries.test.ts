/**
 * Query strings and error examples: every error names the query parameter it is about, a
 * parameter an operation does not take is refused, `since`/`until` read what the CLI reads,
 * and each operation's documented 400 is an answer that operation really gives.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, ROOT, WsClient, getJson, settled, startTestCore } from "../helpers";

describe("query parameters", () => {
  test("a bad value names its parameter, not the body", async () => {
    await using core = await startTestCore();
    for (const [path, name] of [
      ["/api/v1/events?limit=0", "limit"],
      ["/api/v1/events?limit=1001", "limit"],
      ["/api/v1/events?limit=ten", "limit"],
      ["/api/v1/events?cursor=abc", "cursor"],
      ["/api/v1/events?node_id=-1", "node_id"],
      ["/api/v1/commands?limit=0", "limit"],
      ["/api/v1/stats?top=0", "top"],
    ]) {
      const res = await getJson(core.api + path!);
      expect({ path, status: res.status, code: res.body.error.code }).toEqual({ path, status: 400, code: "bad_request" });
      expect(res.body.error.message).toStartWith(`query parameter ${name}`);
      expect(res.body.error.message).not.toContain("body");
    }
  });

  test("a parameter the operation does not take is refused with its name (a misspelt filter returned everything)", async () => {
    await using core = await startTestCore();
    for (const path of [
      "/api/v1/events?evnt_type=cowrie.login.failed",
      "/api/v1/events?pot_id=a&srcip=10.0.0.1",
      "/api/v1/events/1?verbose=1",
      "/api/v1/nodes?status=Running",
      "/api/v1/nodes/1?verbose=1",
      "/api/v1/honeypots?node_id=1",
      "/api/v1/commands?state=failed",
      "/api/v1/commands/x?verbose=1",
      "/api/v1/stats?windw=7d",
      "/api/v1/catalogue?kind=cowrie",
    ]) {
      const res = await getJson(core.api + path);
      const unknown = /[?&]([a-z_]+)=[^&]*$/.exec(path)![1]!;
      expect({ path, status: res.status, message: res.body.error.message }).toEqual({ path, status: 400, message: expect.stringContaining(`unknown query parameter "${unknown}"`) });
    }
    const post = await getJson(`${core.api}/api/v1/nodes/1/commands?dry_run=1`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"DeployPot":"x"}' });
    expect(post.body.error.message).toContain('unknown query parameter "dry_run"');
    expect((await getJson(`${core.api}/api/v1/events?limit=5&pot_id=a`)).status).toBe(200);
    expect((await getJson(`${core.api}/api/v1/nodes?`)).status).toBe(200);
  });

  test("the live feed refuses a misspelt filter instead of sending everything", async () => {
    await using core = await startTestCore();
    for (const url of [`http://127.0.0.1:${core.ports.ws}/?kind=PotEvent`]) {
      const res = await getJson(url);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('unknown query parameter "kind"');
    }
    const stream = await WsClient.connect(`ws://127.0.0.1:${core.ports.api}/api/v1/stream?node=1`);
    expect((await stream.nextKind("Error")).message).toContain('unknown query parameter "node"');
    expect((await stream.closed).code).toBe(1008);
  });
});

describe("since and until", () => {
  test("take what the CLI takes: an age (1h, 2d), RFC 3339, unix seconds", async () => {
    await using core = await startTestCore();
    const now = Date.now();
    const at = (msAgo: number, n: number) => stringify({ eventid: "t.e", n, timestamp: new Date(now - msAgo).toISOString() });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([at(3 * 86_400_000, 1), at(30 * 3_600_000, 2), at(30 * 60_000, 3)]);
    await c.ack(3);
    await settled(core);
    const ns = async (q: string) => {
      const res = await getJson(`${core.api}/api/v1/events?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
      return (res.body.events as any[]).map((e) => e.data.n);
    };
    expect(await ns("since=1h")).toEqual([3]);
    expect(await ns("since=2d")).toEqual([3, 2]);
    expect(await ns("since=2d&until=1h")).toEqual([2]);
    expect(await ns(`since=${encodeURIComponent(new Date(now - 31 * 3_600_000).toISOString().replace("Z", "+00:00"))}`)).toEqual([3, 2]);
    expect(await ns(`since=${Math.floor((now - 2 * 3_600_000) / 1000)}`)).toEqual([3]);
  });

  test("anything else is 400 naming the parameter, %00 and Date.parse's guesses included", async () => {
    await using core = await startTestCore();
    for (const [name, value] of [
      ["since", "%00"],
      ["since", "x%201"],
      ["until", "'%20OR%20'1'%3D'1"],
      ["since", "yesterday"],
      ["since", "2026-02-30T00:00:00Z"],
      ["until", "1h%00"],
    ]) {
      const res = await getJson(`${core.api}/api/v1/events?${name}=${value}`);
      expect({ value, status: res.status }).toEqual({ value, status: 400 });
      expect(res.body.error.message).toStartWith(`query parameter ${name} must be an RFC 3339 time`);
    }
  });
});

describe("OpenAPI error examples", () => {
  test("each operation's 400 example is an answer that operation gives", async () => {
    await using core = await startTestCore();
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    const example = (path: string, status = "400") => doc.paths[path].get.responses[status].content["application/json"].example.error;
    for (const [path, request] of [
      ["/api/v1/events", "/api/v1/events?evnt_type=x"],
      ["/api/v1/events/{id}", "/api/v1/events/abc"],
      ["/api/v1/nodes", "/api/v1/nodes?status=Running"],
      ["/api/v1/nodes/{node_id}", "/api/v1/nodes/sensor-eu-1"],
      ["/api/v1/honeypots", "/api/v1/honeypots?node_id=1"],
      ["/api/v1/commands", "/api/v1/commands?limit=1000"],
      ["/api/v1/stats", "/api/v1/stats?window=soon"],
      ["/api/v1/catalogue", "/api/v1/catalogue?kind=cowrie"],
      ["/api/v1/artifacts", "/api/v1/artifacts?sesion=x"],
      ["/api/v1/artifacts/{sha256}", "/api/v1/artifacts/x"],
      ["/api/v1/artifacts/{sha256}/download", "/api/v1/artifacts/5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b/download?encryption=des"],
    ]) {
      expect({ path, error: (await getJson(core.api + request!)).body.error }).toEqual({ path, error: example(path!) });
    }
    expect(example("/api/v1/events/{id}", "404")).toEqual((await getJson(`${core.api}/api/v1/events/1042`)).body.error);
    expect(example("/api/v1/artifacts/{sha256}", "404")).toEqual((await getJson(`${core.api}/api/v1/artifacts/5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b`)).body.error);
    const messages = Object.values<any>(doc.paths).flatMap((ops) => Object.values<any>(ops).map((op) => op.responses["400"]?.content["application/json"].example.error.message)).filter(Boolean);
    expect(new Set(messages).size).toBe(messages.length);
  });

  test("events[].node_id is nullable, in OpenAPI and in docs/api.md", async () => {
    await using core = await startTestCore();
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    const event = doc.paths["/api/v1/events"].get.responses["200"].content["application/json"].schema.properties.events.items;
    expect(event.properties.node_id).toMatchObject({ format: "uint64", nullable: true });
    expect(readFileSync(join(ROOT, "docs", "api.md"), "utf8")).toContain("| `events[].node_id` | integer (u64, exact) or null | yes |");
  });
});
