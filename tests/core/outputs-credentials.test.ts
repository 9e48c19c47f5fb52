import { describe, expect, test } from "bun:test";
import { connect as natsConnect } from "@nats-io/transport-node";
import { connectAsync } from "mqtt";
import pino from "pino";
import { join } from "node:path";
import { Writable } from "node:stream";
import { sha256 } from "../../src/core/auth";
import { freePort, getJson, startTestCore, tempDir } from "../helpers";
import { numbered, sendEvents, waitFor } from "../helpers/outputs";

const READ = "hb_read_token_for_outputs_0123456789";
const OPERATOR = "hb_operator_token_for_outputs_98765";
const tokens = [
  { name: "viewer", role: "read" as const, sha256: sha256(READ) },
  { name: "alice", role: "operator" as const, sha256: sha256(OPERATOR) },
];
const FAST_RETRY = { min_backoff_ms: 20, max_backoff_ms: 100 };
const run = crypto.randomUUID().slice(0, 8);

const as = (core: { api: string }, token: string, method: string, path: string, body?: unknown) =>
  getJson(`${core.api}${path}`, { method, headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
const outputStatus = async (core: { api: string }, name: string) => (await as(core, READ, "GET", "/api/v1/stats")).body.outputs.find((o: any) => o.name === name);

describe("credentials in output URLs", () => {
  test("are shown to nobody: not in the definitions, not in last_error, not in the log", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "trace" }, new Writable({ write: (c, _e, cb) => (lines.push(c.toString()), cb()) }));
    // A receiver that refuses every batch and echoes the URL it was called on, as many servers do in an error page.
    using echo = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(`no hook at ${req.url}`, { status: 500 }) });
    const closed = freePort();
    const closedNats = freePort();
    const e = `127.0.0.1:${echo.port}`;
    const secrets = ["hook-user", "HOOKPASS1", "QTOKEN1", "SLACKSECRET1", "T0001", "down-user", "DOWNPASS1", "DOWNSIG1", "mq-user", "MQPASS1", "MQKEY1", "MQFIELDPASS", "nats-user", "NATSPASS1", "HDRVALUE1"];
    const defs = [
      { name: "hook", type: "webhook", url: `http://hook-user:HOOKPASS1@${e}/hook?token=QTOKEN1&team=blue`, headers: { authorization: "Bearer HDRVALUE1" } },
      { name: "slack", type: "webhook", preset: "slack", url: `http://${e}/services/T0001/B0001/SLACKSECRET1` },
      { name: "down", type: "webhook", url: `http://down-user:DOWNPASS1@127.0.0.1:${closed}/x?sig=DOWNSIG1` },
      { name: "mqtt", type: "mqtt", url: "mqtt://mq-user:MQPASS1@127.0.0.1:1?key=MQKEY1", password: "MQFIELDPASS", timeout_ms: 2000 },
      { name: "nats", type: "nats", servers: [`nats://nats-user:NATSPASS1@127.0.0.1:${closedNats}`, `nats://127.0.0.1:${closedNats}`], timeout_ms: 2000 },
    ];

    await using core = await startTestCore({ tokens }, logger);
    const shown: string[] = [];
    for (const d of defs) {
      const r = await as(core, OPERATOR, "POST", "/api/v1/outputs", { ...d, retry: FAST_RETRY });
      expect(r.status).toBe(201);
      shown.push(r.text);
    }
    await sendEvents(core, numbered(1, 2), READ);
    for (const d of defs) await waitFor(async () => (await outputStatus(core, d.name)).failed >= 2, `${d.name} to fail twice`);

    for (const token of [READ, OPERATOR]) {
      const list = await as(core, token, "GET", "/api/v1/outputs");
      expect(list.status).toBe(200);
      shown.push(list.text, (await as(core, token, "GET", "/api/v1/stats")).text);
      for (const d of defs) shown.push((await as(core, token, "GET", `/api/v1/outputs/${d.name}`)).text);
    }
    const list = (await as(core, READ, "GET", "/api/v1/outputs")).body.outputs;
    const byName = Object.fromEntries(list.map((o: any) => [o.definition.name, o]));
    const strip = ({ name, type, url, servers, preset, headers, password }: any) => ({ name, type, url, servers, preset, headers, password });
    expect(list.map((o: any) => strip(o.definition))).toEqual([
      { name: "hook", type: "webhook", url: `http://(set)@${e}/hook?token=(set)&team=blue`, servers: undefined, preset: "json", headers: { authorization: "(set)" }, password: undefined },
      { name: "slack", type: "webhook", url: `http://${e}/(set)`, servers: undefined, preset: "slack", headers: undefined, password: undefined },
      { name: "down", type: "webhook", url: `http://(set)@127.0.0.1:${closed}/x?sig=(set)`, servers: undefined, preset: "json", headers: undefined, password: undefined },
      { name: "mqtt", type: "mqtt", url: "mqtt://(set)@127.0.0.1:1?key=(set)", servers: undefined, preset: undefined, headers: undefined, password: "(set)" },
      { name: "nats", type: "nats", url: undefined, servers: [`nats://(set)@127.0.0.1:${closedNats}`, `nats://127.0.0.1:${closedNats}`], preset: undefined, headers: undefined, password: undefined },
    ]);
    expect(byName.hook.status.last_error).toBe(`HTTP 500 from ${e}: no hook at http://${e}/hook?token=(set)&team=blue`);
    expect(byName.slack.status.last_error).toBe(`HTTP 500 from ${e}: no hook at http://${e}/(set)`);
    expect(byName.down.status.last_error).toContain("Unable to connect");
    expect(byName.mqtt.status.last_error).toBe("cannot connect to mqtt://(set)@127.0.0.1:1?key=(set): connect ECONNREFUSED 127.0.0.1:1");
    expect(byName.nats.status.last_error).toBe(`cannot connect to nats://(set)@127.0.0.1:${closedNats}, nats://127.0.0.1:${closedNats}: connection refused`);

    const logged = lines.join("");
    expect(logged).toContain("delivery failed; retrying");
    expect(logged).toContain("cannot connect to mqtt://(set)@127.0.0.1:1?key=(set)");
    const everything = shown.join("\n") + logged;
    expect(secrets.filter((s) => everything.includes(s))).toEqual([]);
  });

  test("still reach their destinations with the credentials, also after a restart", async () => {
    using dir = tempDir();
    const got: number[] = [];
    using hook = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(req) {
        const body = (await req.json()) as { events: { data: { seq: number } }[] };
        const authorized = req.headers.get("authorization") === `Basic ${btoa("alice:p@ss")}` && new URL(req.url).searchParams.get("token") === "T1";
        if (!authorized) return new Response("who are you", { status: 401 });
        got.push(...body.events.map((e) => e.data.seq));
        return new Response("ok");
      },
    });
    const mqttGot: number[] = [];
    const sub = await connectAsync("mqtt://127.0.0.1:1883", { clean: true });
    sub.on("message", (_t, payload) => mqttGot.push(JSON.parse(payload.toString()).data.seq));
    await sub.subscribeAsync(`hb-cred-${run}/#`, { qos: 1 });
    const nc = await natsConnect({ servers: "nats://127.0.0.1:4222" });
    const natsGot: number[] = [];
    const subscription = nc.subscribe(`hb-cred-${run}.>`, { callback: (_err, msg) => void natsGot.push(JSON.parse(msg.string()).data.seq) });
    await nc.flush();
    const config = { tokens, db: join(dir.path, "core.db") };
    const defs = [
      { name: "hook", type: "webhook", url: `http://alice:p%40ss@127.0.0.1:${hook.port}/hook?token=T1` },
      { name: "mqtt", type: "mqtt", url: "mqtt://someone:pw@127.0.0.1:1883?key=ignored", topic: `hb-cred-${run}/{event_type}` },
      { name: "nats", type: "nats", servers: "nats://someone:pw@127.0.0.1:4222", subject: `hb-cred-${run}.{event_type}` },
    ];
    try {
      {
        await using core = await startTestCore(config);
        for (const d of defs) expect((await as(core, OPERATOR, "POST", "/api/v1/outputs", { ...d, retry: FAST_RETRY })).status).toBe(201);
        await sendEvents(core, numbered(1, 3), READ);
        await waitFor(() => got.length >= 3 && mqttGot.length >= 3 && natsGot.length >= 3, "3 events at each destination");
        for (const d of defs) await waitFor(async () => (await outputStatus(core, d.name)).lag === 0, `${d.name} to catch up`);
      }
      await using core = await startTestCore(config);
      await sendEvents(core, numbered(4, 2), READ);
      await waitFor(() => got.length >= 5 && mqttGot.length >= 5 && natsGot.length >= 5, "the events after the restart");
      expect({ got, mqttGot, natsGot }).toEqual({ got: [1, 2, 3, 4, 5], mqttGot: [1, 2, 3, 4, 5], natsGot: [1, 2, 3, 4, 5] });
      for (const d of defs) expect(await outputStatus(core, d.name)).toMatchObject({ failed: 0, last_error: null });
    } finally {
      subscription.unsubscribe();
      await nc.close();
      await sub.endAsync();
    }
  });
});
