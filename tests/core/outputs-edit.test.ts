/**
 * Outputs and alert rules changed over REST as the console changes them (docs/outputs.md):
 * the output types' schemas, an edit that keeps the position and the write-only credentials,
 * pause and resume (kept across a restart), a test delivery, and each refused with the reason:
 * an unknown name 404, one of the config file 409, a bad definition 400 naming the field.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { join } from "node:path";
import { parseWithIds } from "../../src/protocol/json";
import { getJson, startTestCore, tempDir } from "../helpers";
import { numbered, outputStatus, rulesCaughtUp, sendEvents, waitFor } from "../helpers/outputs";
import { onPostgres, testDatabase } from "../helpers/postgres";

/** A webhook receiver that takes a body signed with any of `secrets` and keeps it, with the secret that signed it and its headers. */
function receiver(secrets: string[]) {
  const got: { body: any; secret: string; authorization: string | null }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const text = await req.text();
      const signed = req.headers.get("x-honeybee-signature-256");
      const secret = secrets.find((s) => signed === `sha256=${createHmac("sha256", s).update(text).digest("hex")}`);
      if (!secret) return new Response("bad signature", { status: 401 });
      got.push({ body: parseWithIds(text), secret, authorization: req.headers.get("authorization") });
      return new Response("ok");
    },
  });
  const events = () => got.flatMap((g) => (g.body.events as any[]).map((e) => ({ ...e, secret: g.secret, authorization: g.authorization })));
  return { server, got, events, seqs: () => events().flatMap((e) => (e.data.seq === undefined ? [] : [e.data.seq])), [Symbol.dispose]: () => server.stop(true) };
}

const FAST_RETRY = { min_backoff_ms: 20, max_backoff_ms: 100 };

describe("outputs and rules edited, paused and tested over REST", () => {
  // Disposed after the tests (a `using` here would be at the end of this function, before them).
  const dir = tempDir();
  const hook = receiver(["first-secret", "second-secret"]);
  const url = `http://127.0.0.1:${hook.server.port}/hook`;
  let pg: Awaited<ReturnType<typeof testDatabase>> | null = null;
  afterAll(async () => {
    hook[Symbol.dispose]();
    dir[Symbol.dispose]();
    await pg?.drop();
  });
  const configOf = async () => {
    pg ??= onPostgres() ? await testDatabase() : null;
    return {
      db: pg?.url ?? join(dir.path, "core.db"),
      outputs: [{ name: "from-config", type: "file", path: join(dir.path, "config.ndjson") }],
      rules: [{ name: "rule-from-config", match: { event_type: "never" } }],
    };
  };

  test("an edit keeps the position and the credentials; pause keeps the position across a restart; a test event says what happened", async () => {
    const config = await configOf();
    {
      await using core = await startTestCore(config);
      const call = (method: string, path: string, body?: unknown) =>
        getJson(`${core.api}${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
      const created = await call("POST", "/api/v1/outputs", {
        name: "hook",
        type: "webhook",
        url,
        secret: "first-secret",
        headers: { authorization: "Bearer abc" },
        event_types: ["test.*"],
        retry: FAST_RETRY,
      });
      expect(created.status).toBe(201);
      await sendEvents(core, numbered(1, 3, { eventid: "test.numbered" }));
      await waitFor(() => hook.seqs().length >= 3, "the first 3 events");

      // The form sends back what GET showed, credentials as (set): they are kept.
      const shown = (await call("GET", "/api/v1/outputs/hook")).body.definition;
      expect(shown).toMatchObject({ secret: "(set)", headers: { authorization: "(set)" } });
      const edited = await call("PUT", "/api/v1/outputs/hook", { ...shown, batch_size: 2, from: "earliest" });
      expect(edited.status).toBe(200);
      expect(edited.body.definition).toMatchObject({ name: "hook", batch_size: 2, secret: "(set)", headers: { authorization: "(set)" }, url });
      await sendEvents(core, numbered(4, 3, { eventid: "test.numbered" }));
      await waitFor(() => hook.seqs().length >= 6, "the events after the edit");
      // Left out, the secret is kept too; a new one replaces it.
      const { secret: _, ...withoutSecret } = shown;
      expect((await call("PUT", "/api/v1/outputs/hook", { ...withoutSecret, batch_size: 2, secret: "second-secret" })).status).toBe(200);
      await sendEvents(core, numbered(7, 1, { eventid: "test.numbered" }));
      await waitFor(() => hook.seqs().length >= 7, "the event after the new secret");
      expect(hook.events().map((e) => [e.data.seq, e.secret, e.authorization])).toEqual([
        ...[1, 2, 3, 4, 5, 6].map((n) => [n, "first-secret", "Bearer abc"]),
        [7, "second-secret", "Bearer abc"],
      ]);

      // Refused, with the reason.
      expect((await call("PUT", "/api/v1/outputs/nowhere", shown)).body).toEqual({ error: { code: "not_found", message: "output nowhere does not exist" } });
      expect((await call("PUT", "/api/v1/outputs/from-config", { name: "from-config", type: "file", path: "/dev/null" })).body).toEqual({
        error: { code: "conflict", message: "output from-config is defined in the config file; edit it there" },
      });
      expect((await call("PUT", "/api/v1/outputs/hook", { ...shown, url: "ftp://example.org/" })).body).toEqual({
        error: { code: "bad_request", message: "invalid webhook output: /url Expected string to match '^https?://'" },
      });
      expect((await call("PUT", "/api/v1/outputs/hook", { ...shown, batch_size: 0 })).body.error.message).toBe("invalid webhook output: /batch_size Expected integer to be greater or equal to 1");
      expect((await call("PUT", "/api/v1/outputs/hook", { ...shown, name: "renamed" })).status).toBe(400);
      expect((await call("PUT", "/api/v1/outputs/hook", { ...shown, type: "syslog" })).body.error.message).toBe("invalid syslog output: /host Expected required property");
      for (const op of ["pause", "resume"]) {
        expect((await call("POST", `/api/v1/outputs/nowhere/${op}`)).status).toBe(404);
        expect((await call("POST", `/api/v1/outputs/from-config/${op}`)).body.error.message).toBe(`output from-config is defined in the config file; ${op} it there`);
      }
      expect((await call("POST", "/api/v1/outputs/nowhere/test")).status).toBe(404);

      // Paused: nothing goes out, the lag grows; the state is stored.
      const paused = await call("POST", "/api/v1/outputs/hook/pause");
      expect(paused.body.status).toMatchObject({ state: "paused", delivered: 7 });
      expect((await call("POST", "/api/v1/outputs/hook/pause")).body.status.state).toBe("paused");
      await sendEvents(core, numbered(8, 2, { eventid: "test.numbered" }));
      await waitFor(async () => (await outputStatus(core, "hook")).lag === 2, "a lag of 2 while paused");
      expect((await outputStatus(core, "hook")).state).toBe("paused");

      // A test event goes out even while paused, on its own, marked as a test; its failure is told.
      const tested = await call("POST", "/api/v1/outputs/hook/test");
      expect(tested.body).toMatchObject({ name: "hook", delivered: true, error: null });
      const sample = hook.events().at(-1)!;
      expect(sample).toMatchObject({ id: 0, event_type: "cowrie.login.failed", src_ip: "203.0.113.7", data: { test: true }, secret: "second-secret" });
      expect((await call("POST", "/api/v1/outputs/from-config/test")).body).toMatchObject({ name: "from-config", delivered: true, error: null });
      expect(hook.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    }
    {
      // Restarted: still paused, at its position.
      await using core = await startTestCore(config);
      const hookNow = (await getJson(`${core.api}/api/v1/outputs/hook`)).body;
      expect(hookNow.status).toMatchObject({ state: "paused", lag: 2 });
      expect(hookNow.definition).toMatchObject({ batch_size: 2, secret: "(set)" });
      const resumed = await getJson(`${core.api}/api/v1/outputs/hook/resume`, { method: "POST" });
      expect(resumed.status).toBe(200);
      await waitFor(() => hook.seqs().length >= 9, "the events sent while it was paused");
      await waitFor(async () => (await outputStatus(core, "hook")).lag === 0, "lag 0");
      expect(hook.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);

      // A destination that refuses: the test says why, credentials hidden.
      hook.server.stop(true);
      const failed = (await getJson(`${core.api}/api/v1/outputs/hook/test`, { method: "POST" })).body;
      expect(failed).toMatchObject({ name: "hook", delivered: false });
      expect(failed.error.length).toBeGreaterThan(0);
      expect(failed.error).not.toContain("second-secret");
    }
  });

  test("the output types with their schemas; rules: edited, paused and resumed, refused with the reason", async () => {
    await using core = await startTestCore({ rules: [{ name: "rule-from-config", match: { event_type: "never" } }] });
    const call = (method: string, path: string, body?: unknown) =>
      getJson(`${core.api}${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const alerts = async () => (await call("GET", "/api/v1/events?event_type=alert.logins")).body.events.map((e: any) => e.data.trigger.data.username);
    const r = await getJson(`${core.api}/api/v1/output-types`);
    expect(r.status).toBe(200);
    const types = Object.fromEntries(r.body.types.map((t: any) => [t.type, t]));
    expect(Object.keys(types)).toEqual(["webhook", "syslog", "mqtt", "nats", "file"]);
    expect(Object.fromEntries(r.body.types.map((t: any) => [t.type, t.secrets]))).toEqual({ webhook: ["secret", "headers"], syslog: [], mqtt: ["password"], nats: ["pass", "token"], file: [] });
    const webhook = types.webhook.schema;
    expect(webhook.required).toEqual(["name", "type", "url"]);
    expect(webhook.properties.url).toMatchObject({ type: "string", pattern: "^https?://", description: "Where batches are POSTed." });
    expect(webhook.properties.preset.anyOf.map((s: any) => s.const)).toEqual(["json", "slack", "teams"]);
    expect(webhook.properties.batch_size.default).toBe(100);

    expect((await call("POST", "/api/v1/rules", { name: "logins", match: { event_type: "cowrie.login.failed", fields: [{ field: "data.username", equals: "root" }] }, cooldown_ms: 0 })).status).toBe(201);
    await sendEvents(core, [{ username: "root" }, { username: "admin" }]);
    await rulesCaughtUp(core);
    expect(await alerts()).toEqual(["root"]);

    const edited = await call("PUT", "/api/v1/rules/logins", { match: { event_type: "cowrie.login.failed", fields: [{ field: "data.username", equals: "admin" }] }, cooldown_ms: 0, severity: "high" });
    expect(edited.body).toEqual({
      rule: { name: "logins", severity: "high", match: { event_type: "cowrie.login.failed", fields: [{ field: "data.username", equals: "admin", ignore_case: false }] }, cooldown_ms: 0, outputs: [] },
      origin: "api",
      paused: false,
    });
    await sendEvents(core, [{ username: "root" }, { username: "admin" }]);
    await rulesCaughtUp(core);
    expect(await alerts()).toEqual(["admin", "root"]);

    expect((await call("POST", "/api/v1/rules/logins/pause")).body.paused).toBe(true);
    await sendEvents(core, [{ username: "admin" }]);
    await rulesCaughtUp(core);
    expect(await alerts()).toEqual(["admin", "root"]);
    expect((await call("GET", "/api/v1/rules")).body.rules.map((r: any) => [r.rule.name, r.paused])).toEqual([
      ["rule-from-config", false],
      ["logins", true],
    ]);
    // An edit keeps it paused.
    expect((await call("PUT", "/api/v1/rules/logins", { ...edited.body.rule, cooldown_ms: 1 })).body.paused).toBe(true);
    expect((await call("POST", "/api/v1/rules/logins/resume")).body.paused).toBe(false);
    await sendEvents(core, [{ username: "admin" }]);
    await rulesCaughtUp(core);
    expect(await alerts()).toEqual(["admin", "admin", "root"]);

    expect((await call("PUT", "/api/v1/rules/nowhere", { match: {} })).body).toEqual({ error: { code: "not_found", message: "rule nowhere does not exist" } });
    expect((await call("PUT", "/api/v1/rules/rule-from-config", { match: {} })).body).toEqual({ error: { code: "conflict", message: "rule rule-from-config is defined in the config file; edit it there" } });
    expect((await call("PUT", "/api/v1/rules/logins", { severity: "urgent" })).body.error.message).toMatch(/^invalid rule: \/severity /);
    expect((await call("PUT", "/api/v1/rules/logins", { threshold: { count: 1, window_ms: 10 } })).body.error.message).toBe("invalid rule: /threshold/count Expected integer to be greater or equal to 2");
    expect((await call("PUT", "/api/v1/rules/logins", { outputs: ["nowhere"] })).body).toEqual({ error: { code: "bad_request", message: "invalid rule: /outputs names no output: nowhere" } });
    expect((await call("PUT", "/api/v1/rules/logins", { name: "other" })).status).toBe(400);
    for (const op of ["pause", "resume"]) {
      expect((await call("POST", `/api/v1/rules/nowhere/${op}`)).status).toBe(404);
      expect((await call("POST", `/api/v1/rules/rule-from-config/${op}`)).status).toBe(409);
    }
  });
});
