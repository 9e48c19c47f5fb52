/**
 * Outputs and alert rules in a cluster (docs/scale-out.md): two `honeybee core` processes on
 * one PostgreSQL database and the machine's NATS. An output and a rule defined over REST on
 * one instance are listed and run by both; events taken by the other are delivered once each,
 * by whichever instance holds the output's lease, and raise one alert each; when the holder is
 * killed, the other takes over and goes on from the shared position.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { EventStreamClient, getJson, until } from "../helpers";
import { clusterName, dropCluster, NATS_URL, numbered, sharedDatabase } from "./helpers";
import { spawnCore, type CoreProcess } from "./processes";

function receiver() {
  const got: any[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      got.push(...(((await req.json()) as { events: any[] }).events ?? []));
      return new Response("ok");
    },
  });
  return { server, got, seqs: () => got.map((e) => e.data.seq as number), [Symbol.dispose]: () => server.stop(true) };
}

const post = (core: CoreProcess, path: string, body: unknown) => getJson(`${core.api}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const hookOn = async (core: CoreProcess) => (await getJson(`${core.api}/api/v1/outputs/hook`)).body;

async function send(core: CoreProcess, from: number, n: number) {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  const line = numbered("p");
  c.send(Array.from({ length: n }, (_, i) => line(from + i)));
  await c.ack(n);
}

describe("outputs and rules on two instances", () => {
  const cluster = clusterName();
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  const procs: CoreProcess[] = [];
  let a: CoreProcess, b: CoreProcess;

  beforeAll(async () => {
    db = await sharedDatabase();
    [a, b] = (await Promise.all([0, 1].map(() => spawnCore({ db: db.url, bus: NATS_URL, cluster })))) as [CoreProcess, CoreProcess];
    procs.push(a, b);
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGTERM").catch(() => {})));
    await dropCluster(cluster);
    await db?.drop();
  });

  test("edited, paused and resumed on B, the output on A follows and keeps its position; a rule paused on B is paused on A", async () => {
    using hook = receiver();
    const url = `http://127.0.0.1:${hook.server.port}/hook`;
    const on = async (core: CoreProcess) => (await getJson(`${core.api}/api/v1/outputs/edited`)).body;
    const call = (core: CoreProcess, method: string, path: string, body?: unknown) =>
      getJson(`${core.api}${path}`, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    expect((await post(a, "/api/v1/outputs", { name: "edited", type: "webhook", url, event_types: ["test.numbered"], retry: { min_backoff_ms: 20, max_backoff_ms: 100 } })).status).toBe(201);
    await until(async () => (await on(b))?.definition?.name === "edited", "the output on B");
    await send(b, 1, 10);
    await until(() => hook.got.length >= 10, "10 events at the webhook", 3000);

    const { definition } = await on(a);
    expect((await call(b, "PUT", "/api/v1/outputs/edited", { ...definition, batch_size: 3 })).status).toBe(200);
    await until(async () => (await on(a)).definition.batch_size === 3, "the edit on A");
    expect((await call(b, "POST", "/api/v1/outputs/edited/pause")).body.status.state).toBe("paused");
    await until(async () => (await on(a)).status.state === "paused", "the pause on A");
    await send(a, 11, 5);
    await until(async () => (await on(a)).status.lag === 5 && (await on(b)).status.lag === 5, "a lag of 5 on both while paused", 3000);
    expect(hook.got.length).toBe(10);

    expect((await call(a, "POST", "/api/v1/outputs/edited/resume")).status).toBe(200);
    await until(() => hook.got.length >= 15, "the events sent while it was paused", 3000);
    await until(async () => (await on(a)).status.lag === 0 && (await on(b)).status.lag === 0 && !["paused"].includes((await on(b)).status.state), "both caught up", 3000);
    expect(hook.seqs()).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));

    expect((await post(a, "/api/v1/rules", { name: "paused-rule", match: { event_type: "never" } })).status).toBe(201);
    await until(async () => (await getJson(`${b.api}/api/v1/rules/paused-rule`)).status === 200, "the rule on B");
    expect((await call(b, "POST", "/api/v1/rules/paused-rule/pause")).body.paused).toBe(true);
    await until(async () => (await getJson(`${a.api}/api/v1/rules/paused-rule`)).body.paused === true, "the rule paused on A");
    for (const path of ["/api/v1/outputs/edited", "/api/v1/rules/paused-rule"]) expect((await call(b, "DELETE", path)).status).toBe(200);
    await until(async () => (await getJson(`${a.api}/api/v1/outputs/edited`)).status === 404, "the output gone from A");
  });

  test("defined on A, fed on B: each event delivered once, one alert per event, and the survivor takes over when the holder dies", async () => {
    using hook = receiver();
    const url = `http://127.0.0.1:${hook.server.port}/hook`;
    expect((await post(a, "/api/v1/outputs", { name: "hook", type: "webhook", url, event_types: ["test.numbered"], batch_size: 50, retry: { min_backoff_ms: 20, max_backoff_ms: 100 } })).status).toBe(201);
    expect((await post(a, "/api/v1/rules", { name: "each", match: { event_type: "test.numbered" }, cooldown_ms: 0 })).status).toBe(201);
    // Both instances list them; one delivers, the other stands by.
    await until(async () => {
      const [ha, hb] = await Promise.all([hookOn(a), hookOn(b)]);
      const rules = (await getJson(`${b.api}/api/v1/rules/each`)).status;
      return rules === 200 && [ha?.status?.state, hb?.status?.state].filter((s) => s === "standby").length === 1;
    }, "the output on both instances, one of them standing by");

    await send(b, 1, 500);
    await until(() => hook.got.length >= 500, "500 events at the webhook", 3000);
    const alerts = async () => (await getJson(`${a.api}/api/v1/stats?top=50`)).body.top.event_types.find((t: any) => t.value === "alert.each")?.count ?? 0;
    await until(async () => (await alerts()) >= 500, "500 alerts stored", 3000);
    // Whatever a second deliverer would add has had time to arrive.
    await until(async () => (await hookOn(a)).status.lag === 0 && (await hookOn(b)).status.lag === 0, "both instances to see the output caught up", 3000);
    await Bun.sleep(1500);
    expect(hook.got.length).toBe(500);
    expect(new Set(hook.seqs()).size).toBe(500);
    expect(new Set(hook.got.map((e) => String(e.id))).size).toBe(500);
    expect(hook.got.every((e) => e.pot_id === "pot-p" && e.event_type === "test.numbered" && typeof e.id === "number")).toBe(true);
    expect(await alerts()).toBe(500);

    // The holder dies; the other takes the lease and goes on from the shared position.
    const holder = (await hookOn(a)).status.state === "standby" ? b : a;
    const survivor = holder === a ? b : a;
    await holder.kill("SIGKILL");
    await send(survivor, 501, 100);
    await until(() => new Set(hook.seqs()).size >= 600, "the events sent after the holder died", 3000);
    expect(new Set(hook.seqs())).toEqual(new Set(Array.from({ length: 600 }, (_, i) => i + 1)));
    expect((await hookOn(survivor)).status.state).not.toBe("standby");
    expect(survivor.logs.filter((l) => l.msg === "this instance delivers now (it took the lease over)").map((l) => l.output)).toContain("hook");
  });
});
