/**
 * Deduplication in a cluster keys on who sent an event and where it stands in that sender's
 * stream, never on its content (tests/ingest/dedup.test.ts: the same on SQLite): identical lines
 * are as many events as lines, and a node's spool replayed to another instance after a kill is
 * stored once, the replayed events counted as duplicates.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connectBus, type Bus } from "../../src/cluster/connect";
import { silentLogger } from "../../src/log";
import { BIG_ID, getJson, LineClient, registerNode, startTestCore } from "../helpers";
import { clusterName, dropCluster, NATS_URL, sharedDatabase, until } from "./helpers";
import { spawnCore, type CoreProcess } from "./processes";

/** Resolves once the writers hold nothing back: every message on the bus committed and acknowledged. */
async function writersDone(bus: Bus): Promise<void> {
  await until(async () => {
    const info = await bus.jsm.consumers.info(bus.names.eventStream, bus.names.writerConsumer).catch(() => null);
    return info !== null && info.num_pending === 0 && info.num_ack_pending === 0;
  }, "the writers to commit every message");
}

const honnypotterLogin = (unixSeconds: number) =>
  JSON.stringify({ eventid: "honnypotter.login.failed", pot_id: "web-01", pot_type: "honnypotter", timestamp: unixSeconds, src_ip: "203.0.113.7", username: "admin", password: "hunter2", user_agent: "curl/7.88.1", request_uri: "/standalone.php" });

async function sendCopies(port: number, line: string, n: number) {
  const c = await LineClient.connect(port);
  c.sendRaw(`${line}\n`.repeat(n));
  c.close();
  await c.closed;
}

const spoolLine = (n: number) => JSON.stringify({ eventid: "cowrie.login.failed", pot_id: "ssh-1", src_ip: "203.0.113.9", username: "root", password: `pw-${n}` });

/** A node's event stream at spool position `first`, events first+1..last, until Core acknowledges them all. */
async function sendSpool(port: number, first: number, last: number, spool = "spool-a") {
  const c = await LineClient.connect(port);
  c.send("EventStreamHello", { node_id: BIG_ID, acks: true, spool_id: spool, first_seq: first });
  let text = "";
  for (let n = first + 1; n <= last; n++) text += spoolLine(n) + "\n";
  c.sendRaw(text);
  for (;;) if ((await c.nextKind("EventAck")).seq === last - first) break;
  c.close();
}

describe("a cluster on PostgreSQL and NATS", () => {
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  const cluster = clusterName();
  const procs: CoreProcess[] = [];
  let bus: Bus;

  beforeAll(async () => {
    db = await sharedDatabase();
    bus = await connectBus({ bus: NATS_URL, cluster, bus_replicas: 1 }, silentLogger());
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL").catch(() => {})));
    await bus?.close();
    await dropCluster(cluster);
    await db?.drop();
  });

  test("identical lines from senders that never resend are as many events as lines: 200 on one connection, 400 from two", async () => {
    await using core = await startTestCore({ db: db.url, bus: NATS_URL, cluster });
    const line = honnypotterLogin(Math.floor(Date.now() / 1000) - 3600);
    const stored = async () => (await getJson(`${core.api}/api/v1/events?pot_id=web-01&limit=1000`)).body.events as any[];
    await sendCopies(core.ports.event, line, 200);
    await until(async () => (await getJson(`${core.api}/api/v1/stats`)).body.ingest.committed === 200, "200 on the bus");
    await writersDone(bus);
    expect((await stored()).length).toBe(200);
    await sendCopies(core.ports.event, line, 200);
    await until(async () => (await getJson(`${core.api}/api/v1/stats`)).body.ingest.committed === 400, "400 on the bus");
    await writersDone(bus);
    const all = await stored();
    expect({ events: all.length, times: new Set(all.map((e) => e.timestamp)).size }).toEqual({ events: 400, times: 1 });
    expect((await getJson(`${core.api}/api/v1/stats`)).body.ingest).toMatchObject({ duplicates: 0 });
  });

  test("a node's spool replayed to another instance after a SIGKILL is stored once, the replayed events counted as duplicates", async () => {
    const [a, b] = await Promise.all([spawnCore({ db: db.url, bus: NATS_URL, cluster }), spawnCore({ db: db.url, bus: NATS_URL, cluster })]);
    procs.push(a!, b!);
    const onA = await registerNode(a!);
    await sendSpool(a!.ports.event, 0, 10);
    await writersDone(bus);
    await a!.kill("SIGKILL");
    onA.close();
    using onB = await registerNode(b!);
    // The acks for 6..10 never reached the node: it sends them again, to the instance it fails over to.
    await sendSpool(b!.ports.event, 5, 15);
    await writersDone(bus);
    const rows = await getJson(`${b!.api}/api/v1/events?pot_id=ssh-1&limit=100`);
    const passwords = rows.body.events.map((e: any) => e.data.password).sort();
    expect(passwords).toEqual(Array.from({ length: 15 }, (_, i) => `pw-${i + 1}`).sort());
    expect((await getJson(`${b!.api}/api/v1/stats`)).body.ingest).toMatchObject({ committed: 10, duplicates: 5 });
    expect(onB).toBeDefined();
  });
});
