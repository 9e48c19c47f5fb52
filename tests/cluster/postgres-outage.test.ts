/**
 * PostgreSQL stopped for 10 s under a running deployment (a private server: the machine's
 * is shared): the ingest instance goes on acknowledging events, which JetStream keeps; the
 * writer catches up once the database is back, every event stored exactly once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getJson, until } from "../helpers";
import { scratchDatabaseOn } from "../helpers/postgres";
import { startPrivatePg, type PrivatePg } from "../helpers/private-pg";
import { openPgDatabase } from "../../src/db/pg";
import { clusterName, dropCluster, NATS_URL, numbered, storedPerProducer } from "./helpers";
import { AckedProducer, spawnCore, type CoreProcess } from "./processes";

const cluster = clusterName();
let pg: PrivatePg;
let url: string;
const procs: CoreProcess[] = [];

beforeAll(async () => {
  pg = await startPrivatePg();
  url = (await scratchDatabaseOn(pg.url, "outage")).url;
  await (await openPgDatabase(url)).$client.close();
});
afterAll(async () => {
  await Promise.all(procs.map((p) => p.kill("SIGTERM").catch(() => {})));
  await dropCluster(cluster);
  await pg?.destroy();
});

test("PostgreSQL down for 10 s: ingest keeps acknowledging into JetStream, the writer catches up", async () => {
  const ingest = await spawnCore({ db: url, bus: NATS_URL, cluster, roles: "ingest,api" });
  const writer = await spawnCore({ db: url, bus: NATS_URL, cluster, roles: "writer" });
  procs.push(ingest, writer);
  const n = 100_000;
  // A small window paces the producer (an acknowledgement per batch), so it is still sending once PostgreSQL is down.
  const producer = new AckedProducer(() => [ingest.ports.event], numbered("outage"), undefined, 500);
  const running = producer.run(n, 120_000);
  await until(() => producer.acked > 1000, "events flowing");
  await pg.stop();
  const ackedAtStop = producer.acked;
  const down = Date.now();
  await until(() => producer.acked > ackedAtStop + 1000 || producer.acked === n, "acknowledgements while PostgreSQL is down", 3000);
  const ackedWhileDown = producer.acked - ackedAtStop;
  // The writer says it cannot write (its /health is an instance's; the writer role has no REST here: its log).
  await until(() => writer.logs.some((l) => /committing events to PostgreSQL fails/.test(l.msg ?? "")), "the writer to report the outage");
  await Bun.sleep(Math.max(0, 10_000 - (Date.now() - down)));
  await pg.start();
  await running;
  const stored = await until(async () => {
    const s = await storedPerProducer(url).catch(() => ({}) as Record<string, never>);
    return s.outage?.distinct === n ? s : null;
  }, "the writer to catch up", 6000);
  expect(ackedWhileDown).toBeGreaterThan(1000);
  expect(stored!.outage).toEqual({ rows: n, distinct: n, max: n });
  expect(writer.logs.some((l) => /works again/.test(l.msg ?? ""))).toBe(true);
  expect((await getJson(`${ingest.api}/health`)).status).toBe(200);
});
