import { describe, expect, test } from "bun:test";
import pino from "pino";
import { Writable } from "node:stream";
import { ConfigError } from "../../src/config";
import { sha256 } from "../../src/core/auth";
import { BIG_ID, WsClient, getJson, registerNode, startTestCore, until } from "../helpers";

const READ = "hb_read_token_for_tests_0123456789";
const OPERATOR = "hb_operator_token_for_tests_987654";
const tokens = [
  { name: "viewer", role: "read" as const, sha256: sha256(READ) },
  { name: "alice", role: "operator" as const, sha256: sha256(OPERATOR) },
];
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const postCommand = (api: string, headers: Record<string, string>) =>
  getJson(`${api}/api/v1/nodes/${BIG_ID}/commands`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ DeployPot: "ssh-1" }) });

describe("safe defaults", () => {
  test("with no credentials, loopback needs no token anywhere", async () => {
    await using core = await startTestCore();
    using node = await registerNode(core);
    expect((await getJson(`${core.api}/api/v1/nodes`)).status).toBe(200);
    expect((await postCommand(core.api, {})).status).toBe(202);
    using ws = await WsClient.connect(core.ws);
    ws.send({ node_id: BIG_ID, command: { StopPot: "ssh-1" } });
    expect(await ws.nextKind("CommandAck")).toMatchObject({ accepted: true });
    expect(node).toBeDefined();
  });

  test("a non-loopback bind without authentication refuses to start and says how to fix it", async () => {
    const start = startTestCore({ host: "0.0.0.0" });
    expect(start).rejects.toThrow(ConfigError);
    expect(start).rejects.toThrow(/honeybee token create/);
  });

  test("--insecure starts anyway, with a warning", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, new Writable({ write: (c, _e, cb) => (lines.push(c.toString()), cb()) }));
    await using core = await startTestCore({ host: "0.0.0.0", insecure: true }, logger);
    expect(lines.join("")).toContain("INSECURE");
    expect((await getJson(`http://127.0.0.1:${core.ports.api}/health`)).body).toEqual({ status: "ok" });
  });

  test("with tokens and node enrollment, a non-loopback bind is allowed", async () => {
    await using core = await startTestCore({ host: "0.0.0.0", tokens, node_enrollment_token: "enroll-me" });
    expect((await getJson(`http://127.0.0.1:${core.ports.api}/health`)).status).toBe(200);
  });
});

describe("REST with API tokens", () => {
  test("no token, wrong token, read token, operator token", async () => {
    await using core = await startTestCore({ tokens });
    using node = await registerNode(core);
    expect((await getJson(`${core.api}/health`)).status).toBe(200);
    const none = await getJson(`${core.api}/api/v1/nodes`);
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthorized");
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await getJson(`${core.api}/api/v1/nodes`, { headers: bearer("nope") })).body.error).toEqual({ code: "unauthorized", message: "the API token is not valid" });
    expect((await getJson(`${core.api}/api/v1/nodes`, { headers: bearer(READ) })).status).toBe(200);
    const forbidden = await postCommand(core.api, bearer(READ));
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");
    const ok = await postCommand(core.api, bearer(OPERATOR));
    expect(ok.status).toBe(202);
    expect((await getJson(`${core.api}/api/v1/commands/${ok.body.command_id}`, { headers: bearer(READ) })).body.principal).toBe("alice");
    expect(node).toBeDefined();
  });

  test("OpenAPI declares the bearer scheme", async () => {
    await using core = await startTestCore({ tokens });
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  test("the backend stream needs a token too", async () => {
    await using core = await startTestCore({ tokens });
    expect(WsClient.connect(`ws://127.0.0.1:${core.ports.api}/api/v1/stream`)).rejects.toThrow();
    using ws = await WsClient.connect(`ws://127.0.0.1:${core.ports.api}/api/v1/stream`, { headers: bearer(READ) });
    using node = await registerNode(core);
    expect(await ws.nextKind("NodeRegistration")).toMatchObject({ node_id: BIG_ID });
    expect(node).toBeDefined();
  });
});

describe("WebSocket with API tokens", () => {
  test("a token in the header, the subprotocol or the query; none is refused", async () => {
    await using core = await startTestCore({ tokens });
    expect(WsClient.connect(core.ws)).rejects.toThrow();
    const res = await fetch(`http://127.0.0.1:${core.ports.ws}/`, { headers: { upgrade: "websocket", connection: "upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" } });
    expect(res.status).toBe(401);
    using a = await WsClient.connect(core.ws, { headers: bearer(READ) });
    using b = await WsClient.connect(core.ws, { protocols: ["bearer", READ] });
    expect(b.ws.protocol).toBe("bearer");
    using c = await WsClient.connect(`${core.ws}/?token=${READ}`);
    using node = await registerNode(core);
    for (const client of [a, b, c]) expect(await client.nextKind("NodeRegistration")).toMatchObject({ node_id: BIG_ID });
    expect(node).toBeDefined();
  });

  test("a NodeCommand from a read client is refused with a CommandAck that says why", async () => {
    await using core = await startTestCore({ tokens });
    using node = await registerNode(core);
    using reader = await WsClient.connect(core.ws, { headers: bearer(READ) });
    reader.send({ node_id: BIG_ID, command: { StopPot: "ssh-1" } });
    expect(await reader.nextKind("CommandAck")).toEqual({ command_id: null, node_id: BIG_ID, accepted: false, message: 'forbidden: token "viewer" has role read; commands need operator' });
    using operator = await WsClient.connect(core.ws, { headers: bearer(OPERATOR) });
    operator.send({ node_id: BIG_ID, command: { StopPot: "ssh-1" } });
    const ack = await operator.nextKind("CommandAck");
    expect(ack.accepted).toBe(true);
    expect((await getJson(`${core.api}/api/v1/commands/${ack.command_id}`, { headers: bearer(READ) })).body).toMatchObject({ principal: "alice", source: "ws" });
    expect(node).toBeDefined();
  });
});

describe("rate and connection limits", () => {
  test("REST requests past the limit get 429 with Retry-After", async () => {
    await using core = await startTestCore({ api_rate_per_minute: 60, api_rate_limit_loopback: true });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 15; i++) {
      const r = await getJson(`${core.api}/api/v1/nodes`);
      statuses.push(r.status);
      if (r.status === 429) retryAfter = r.headers.get("retry-after");
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
    expect(statuses.slice(10)).toEqual(Array(5).fill(429));
    expect(Number(retryAfter)).toBeGreaterThan(0);
    expect(core.security.stats().rate_limited.api).toBe(5);
  });

  test("a local client making 500 rapid requests to /health and to /api/v1/stats never gets 429; with loopback counted, the limit holds but /health is spared", async () => {
    // Bursts of concurrent requests, as a console polling several panels or a health checker does.
    const burst = async (api: string, path: string, n = 500, parallel = 25) => {
      const statuses = new Map<number, number>();
      for (let i = 0; i < n; i += parallel) {
        const batch = await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, () => fetch(api + path).then(async (r) => (await r.arrayBuffer(), r.status))));
        for (const s of batch) statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
      return Object.fromEntries(statuses);
    };
    // 6 a minute: a burst of 1, then one every 10 s, far below what each path gets here.
    {
      await using core = await startTestCore({ api_rate_per_minute: 6 });
      expect(core.config.api_rate_limit_loopback).toBe(false);
      expect({ health: await burst(core.api, "/health"), stats: await burst(core.api, "/api/v1/stats") }).toEqual({ health: { 200: 500 }, stats: { 200: 500 } });
      expect(core.security.stats().rate_limited.api).toBe(0);
    }
    {
      await using core = await startTestCore({ api_rate_per_minute: 6, api_rate_limit_loopback: true });
      const stats = await burst(core.api, "/api/v1/stats");
      expect(stats[200]).toBeGreaterThanOrEqual(1);
      expect(stats[429]).toBeGreaterThan(0);
      expect(stats[200]! + stats[429]!).toBe(500);
      // The address is out of budget now; /health is still answered.
      expect(await burst(core.api, "/health")).toEqual({ 200: 500 });
      expect((await getJson(`${core.api}/api/v1/nodes`)).status).toBe(429);
    }
    {
      // Bound to every address, an IPv4 loopback client arrives as ::ffff:127.0.0.1: still local.
      await using core = await startTestCore({ host: "::", insecure: true, api_rate_per_minute: 6 });
      expect(await burst(`http://127.0.0.1:${core.ports.api}`, "/api/v1/stats", 50)).toEqual({ 200: 50 });
      expect(await burst(`http://[::1]:${core.ports.api}`, "/api/v1/stats", 50)).toEqual({ 200: 50 });
    }
  });

  test("WebSocket commands past the limit are refused with rate_limited", async () => {
    await using core = await startTestCore({ ws_commands_per_minute: 6 });
    using node = await registerNode(core);
    using ws = await WsClient.connect(core.ws);
    const acks: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      ws.send({ node_id: BIG_ID, command: { GetPotStatus: "a" } });
      acks.push((await ws.nextKind("CommandAck")).accepted);
    }
    expect(acks).toEqual([true, false, false]);
    expect(node).toBeDefined();
  });

  test("repeated failed authentications lock the address out for a while", async () => {
    await using core = await startTestCore({ tokens, auth_failures_per_minute: 3 });
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) codes.push((await getJson(`${core.api}/api/v1/nodes`, { headers: bearer(`wrong-${i}`) })).body.error.code);
    expect(codes).toEqual(["unauthorized", "unauthorized", "unauthorized", "too_many_failures", "too_many_failures"]);
    expect((await getJson(`${core.api}/api/v1/nodes`, { headers: bearer(READ) })).body.error.code).toBe("too_many_failures");
  });

  test("concurrent connections per address are capped on the node channel and the proxy", async () => {
    await using core = await startTestCore({ max_connections_per_address: 2 });
    using a = await registerNode(core, 1n, "a");
    using b = await registerNode(core, 2n, "b");
    const { LineClient } = await import("../helpers");
    using c = await LineClient.connect(core.ports.node);
    expect(await c.nextKind("Error")).toMatchObject({ code: "too_many_connections" });
    using w1 = await WsClient.connect(core.ws);
    using w2 = await WsClient.connect(core.ws);
    expect(WsClient.connect(core.ws)).rejects.toThrow();
    expect([a, b, w1, w2].length).toBe(4);
    await until(() => core.security.stats().connections_refused.ws === 1, "the refusal counted");
    const stats = await getJson(`${core.api}/api/v1/stats`);
    expect(stats.body.security.connections_refused).toEqual({ node: 1, events: 0, ws: 1 });
  });
});

test("tokens never reach the log", async () => {
  const lines: string[] = [];
  const logger = pino({ level: "trace" }, new Writable({ write: (c, _e, cb) => (lines.push(c.toString()), cb()) }));
  await using core = await startTestCore({ tokens }, logger);
  using node = await registerNode(core);
  await postCommand(core.api, bearer(OPERATOR));
  await getJson(`${core.api}/api/v1/nodes`, { headers: bearer("not-a-real-token-xyz") });
  using ws = await WsClient.connect(`${core.ws}/?token=${READ}`);
  ws.send({ node_id: BIG_ID, command: { StopPot: "x" } });
  await ws.nextKind("CommandAck");
  const all = lines.join("");
  expect(all).toContain("command sent");
  for (const secret of [OPERATOR, READ, "not-a-real-token-xyz"]) expect(all).not.toContain(secret);
  expect(node).toBeDefined();
});
