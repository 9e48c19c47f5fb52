import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { parseWithIds } from "../../src/protocol/json";
import { sha256 } from "../../src/core/auth";
import { getJson, startTestCore, tempDir } from "../helpers";
import { failedAtLeast, numbered, outputStatus, sendEvents, waitFor } from "../helpers/outputs";

const SECRET = "s3cret";
const FAST_RETRY = { min_backoff_ms: 20, max_backoff_ms: 100 };

/** A webhook receiver that checks each request's signature and keeps what it was sent. */
function receiver(port = 0) {
  const got: { body: any; delivery: string | null }[] = [];
  const badSignatures: string[] = [];
  const server = Bun.serve({
    port,
    hostname: "127.0.0.1",
    async fetch(req) {
      const text = await req.text();
      const expected = `sha256=${createHmac("sha256", SECRET).update(text).digest("hex")}`;
      if (req.headers.get("x-honeybee-signature-256") !== expected) {
        badSignatures.push(text);
        return new Response("bad signature", { status: 401 });
      }
      got.push({ body: parseWithIds(text), delivery: req.headers.get("x-honeybee-delivery") });
      return new Response("ok");
    },
  });
  return { server, got, badSignatures, seqs: () => got.flatMap((g) => (g.body.events ?? []).map((e: any) => e.data.seq)) };
}

describe("webhook output", () => {
  test("a receiver that is down loses nothing: batches are retried until it is back, each event once, and the position survives a restart", async () => {
    using dir = tempDir();
    let r = receiver();
    const port = r.server.port;
    const url = `http://127.0.0.1:${port}/hook`;
    const config = { db: join(dir.path, "core.db"), outputs: [{ name: "hook", type: "webhook", url, secret: SECRET, batch_size: 7, retry: FAST_RETRY }] };
    const seen: number[] = [];
    try {
      {
        await using core = await startTestCore(config);
        await sendEvents(core, numbered(1, 10));
        await waitFor(() => r.seqs().length >= 10, "the first 10 events");
        await waitFor(async () => (await outputStatus(core, "hook")).lag === 0, "the answers");
        r.server.stop(true);
        seen.push(...r.seqs());

        await sendEvents(core, numbered(11, 20));
        await failedAtLeast(core, "hook", 2);
        expect(await outputStatus(core, "hook")).toMatchObject({ state: "retrying", delivered: 10, lag: 20, dropped: 0 });

        r = receiver(port);
        await waitFor(() => r.seqs().length >= 20, "the 20 events sent while it was down");
        await waitFor(async () => (await outputStatus(core, "hook")).lag === 0, "lag 0");
        expect(await outputStatus(core, "hook")).toMatchObject({ name: "hook", type: "webhook", origin: "config", state: "idle", delivered: 30, lag: 0, last_error: null });
      }
      // Core restarted on the same database: only new events go out.
      await using core = await startTestCore(config);
      await sendEvents(core, numbered(31, 3));
      await waitFor(() => r.seqs().length >= 23, "the events after the restart");
      seen.push(...r.seqs());
      expect(seen).toEqual(Array.from({ length: 33 }, (_, i) => i + 1));
      expect(r.badSignatures).toEqual([]);
      const body = r.got[0]!.body;
      expect(body.output).toBe("hook");
      expect(body.events[0]).toMatchObject({ event_type: "cowrie.login.failed", pot_id: "ssh-01", pot_type: "cowrie", src_ip: "203.0.113.7" });
      expect(r.got[0]!.delivery).toMatch(/^hook:\d+-\d+$/);
    } finally {
      r.server.stop(true);
    }
  });

  test("outputs over REST: added, listed with secrets hidden, refused with the field named, removed", async () => {
    const r = receiver();
    try {
      await using core = await startTestCore();
      const post = (body: unknown) => getJson(`${core.api}/api/v1/outputs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      const url = `http://127.0.0.1:${r.server.port}/`;

      expect((await post({ name: "bad", type: "webhook" })).body).toEqual({ error: { code: "bad_request", message: "invalid webhook output: /url Expected required property" } });
      expect((await post({ name: "bad", type: "carrier-pigeon" })).body.error.message).toBe('type must be one of webhook, syslog, mqtt, nats, file; got "carrier-pigeon"');
      expect((await post({ name: "x y", type: "webhook", url })).status).toBe(400);

      const created = await post({ name: "hook", type: "webhook", url, secret: SECRET, headers: { authorization: "Bearer abc" } });
      expect(created.status).toBe(201);
      expect(created.body.definition).toEqual({ name: "hook", type: "webhook", url, secret: "(set)", headers: { authorization: "(set)" }, event_types: ["*"], from: "latest", batch_size: 100, preset: "json", timeout_ms: 10000 });
      expect((await post({ name: "hook", type: "webhook", url })).status).toBe(409);

      await sendEvents(core, numbered(1, 3));
      await waitFor(() => r.seqs().length >= 3, "3 events");
      const list = await getJson(`${core.api}/api/v1/outputs`);
      expect(list.body.outputs.map((o: any) => [o.definition.name, o.origin, o.status.delivered])).toEqual([["hook", "api", 3]]);

      expect((await getJson(`${core.api}/api/v1/outputs/hook`, { method: "DELETE" })).body).toEqual({ deleted: "hook" });
      expect((await getJson(`${core.api}/api/v1/outputs/hook`)).status).toBe(404);
      expect((await getJson(`${core.api}/api/v1/stats`)).body.outputs).toEqual([]);
    } finally {
      r.server.stop(true);
    }
  });
});

test("outputs and rules are changed with the operator role only; a read token lists them", async () => {
  const READ = "read-token-0123456789";
  const OPERATOR = "operator-token-0123456789";
  await using core = await startTestCore({
    tokens: [
      { name: "viewer", role: "read", sha256: sha256(READ) },
      { name: "alice", role: "operator", sha256: sha256(OPERATOR) },
    ],
  });
  const as = (token: string, method: string, path: string, body?: unknown) =>
    getJson(`${core.api}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const output = { name: "ecs", type: "file", path: "/dev/null" };
  expect((await as(READ, "POST", "/api/v1/outputs", output)).status).toBe(403);
  expect((await as(READ, "POST", "/api/v1/rules", { name: "r" })).status).toBe(403);
  expect((await as(OPERATOR, "POST", "/api/v1/outputs", output)).status).toBe(201);
  expect((await as(OPERATOR, "POST", "/api/v1/rules", { name: "r", outputs: ["ecs"] })).status).toBe(201);
  expect((await as(READ, "GET", "/api/v1/outputs")).body.outputs.map((o: any) => o.definition.name)).toEqual(["ecs"]);
  expect((await as(READ, "GET", "/api/v1/rules")).body.rules.map((r: any) => r.rule.name)).toEqual(["r"]);
  expect((await as(READ, "DELETE", "/api/v1/outputs/ecs")).status).toBe(403);
  expect((await getJson(`${core.api}/api/v1/outputs`)).status).toBe(401);
});

test("a bad output or rule in the config file stops Core with the field at fault", async () => {
  await expect(startTestCore({ outputs: [{ name: "siem", type: "syslog" }] })).rejects.toThrow('invalid value for "outputs": invalid syslog output: /host Expected required property (docs/outputs.md)');
  await expect(startTestCore({ rules: [{ name: "r", match: { src_ip: "300.1.1.1" } }] })).rejects.toThrow('invalid value for "rules": invalid rule: src_ip: "300.1.1.1" is not an address or CIDR block (docs/outputs.md)');
});
