/**
 * A NATS server lost under a running instance (a private three-server cluster: the machine's
 * server is shared): the instance reconnects to the others, its event stream (three copies)
 * goes on after JetStream elects a new leader, and every acknowledged event is stored once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getJson, until } from "../helpers";
import { startPrivateNats } from "../helpers/private-nats";
import { clusterName, numbered, sharedDatabase, storedPerProducer } from "./helpers";
import { AckedProducer, spawnCore, type CoreProcess } from "./processes";

let nats: Awaited<ReturnType<typeof startPrivateNats>>;
let db: Awaited<ReturnType<typeof sharedDatabase>>;
let core: CoreProcess | null = null;

beforeAll(async () => {
  [nats, db] = await Promise.all([startPrivateNats({ cluster: 3 }), sharedDatabase()]);
});
afterAll(async () => {
  await core?.kill("SIGTERM").catch(() => {});
  await nats?.destroy();
  await db?.drop();
});

test("a NATS server killed in the middle: the instance goes on with the others, every event stored once", async () => {
  core = await spawnCore({ db: db.url, bus: nats.urls.join(","), cluster: clusterName(), args: ["--bus-replicas", "3"] });
  const n = 20_000;
  const producer = new AckedProducer(() => [core!.ports.event], numbered("nats-loss"));
  const running = producer.run(n, 120_000);
  await until(() => producer.acked > 2000, "events flowing");
  const ackedAtKill = producer.acked;
  await nats.servers[0]!.kill();
  await running;
  expect(ackedAtKill).toBeLessThan(n);
  const stored = await until(async () => {
    const s = await storedPerProducer(db.url);
    return s["nats-loss"]?.distinct === n ? s : null;
  }, "every event stored", 6000);
  expect(stored!["nats-loss"]).toEqual({ rows: n, distinct: n, max: n });
  expect((await getJson(`${core.api}/health`)).status).toBe(200);
});
