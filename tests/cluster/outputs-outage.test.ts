/**
 * Outputs while PostgreSQL is stopped for a while under two instances (a private server: the
 * machine's is shared). A definition sent meanwhile is refused with 503, not answered and
 * lost; the output's lease goes with the holder's connection, and once the database is back
 * one instance takes it and delivers every event, those acknowledged during the outage too.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { EventStreamClient, getJson, until } from "../helpers";
import { scratchDatabaseOn } from "../helpers/postgres";
import { startPrivatePg, type PrivatePg } from "../helpers/private-pg";
import { openPgDatabase } from "../../src/db/pg";
import { clusterName, dropCluster, NATS_URL, numbered } from "./helpers";
import { spawnCore, type CoreProcess } from "./processes";

const cluster = clusterName();
let pg: PrivatePg;
let url: string;
const procs: CoreProcess[] = [];

beforeAll(async () => {
  pg = await startPrivatePg();
  url = (await scratchDatabaseOn(pg.url, "outputs_outage")).url;
  await (await openPgDatabase(url)).$client.close();
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGTERM").catch(() => {})));
  await dropCluster(cluster);
  await pg?.destroy();
});

async function send(core: CoreProcess, from: number, n: number) {
  using c = await EventStreamClient.connect(core.ports.event, { acks: true });
  const line = numbered("o");
  c.send(Array.from({ length: n }, (_, i) => line(from + i)));
  await c.ack(n);
}

const post = (core: CoreProcess, body: unknown) => getJson(`${core.api}/api/v1/outputs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

test("PostgreSQL down for 5 s: definitions are refused meanwhile, and every event is delivered once it is back", async () => {
  const [a, b] = await Promise.all([0, 1].map(() => spawnCore({ db: url, bus: NATS_URL, cluster })));
  procs.push(a!, b!);
  const got: number[] = [];
  using hook = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      got.push(...((await req.json()) as { events: any[] }).events.map((e) => e.data.seq as number));
      return new Response("ok");
    },
  });
  const def = (name: string) => ({ name, type: "webhook", url: `http://127.0.0.1:${hook.port}/`, event_types: ["test.numbered"] });
  expect((await post(a!, def("hook"))).status).toBe(201);
  await until(async () => (await getJson(`${b!.api}/api/v1/outputs/hook`)).status === 200, "the output on B");
  await send(b!, 1, 200);
  await until(() => new Set(got).size >= 200, "the events before the outage", 2000);

  await pg.stop();
  const refused = await post(a!, def("later"));
  expect([refused.status, refused.body?.error?.code]).toEqual([503, "database_unavailable"]);
  await send(a!, 201, 200);
  await Bun.sleep(5000);
  await pg.start();

  await until(() => new Set(got).size >= 400, "every event once PostgreSQL is back", 6000);
  expect(new Set(got)).toEqual(new Set(Array.from({ length: 400 }, (_, i) => i + 1)));
  const states = await until(async () => {
    const s = await Promise.all([a!, b!].map(async (c) => (await getJson(`${c.api}/api/v1/outputs/hook`)).body?.status?.state));
    return s.filter((x) => x === "standby").length === 1 ? s : null;
  }, "one instance to deliver, the other to stand by");
  expect(states).toContain("standby");
  expect((await getJson(`${a!.api}/api/v1/outputs`)).body.outputs.map((o: any) => o.definition.name)).toEqual(["hook"]);
});
