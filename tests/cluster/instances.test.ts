/**
 * Three `honeybee core` processes on one PostgreSQL database and the machine's NATS, as
 * docs/scale-out.md runs them: events sent to one are on every instance's feed and REST;
 * acknowledged events survive the SIGKILL of the instance that took them and of a writer,
 * each stored exactly once; a node agent fails over from one instance to another and its
 * commands follow it. PostgreSQL stopped for 10 s: tests/cluster/postgres-outage.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/log";
import { startNode } from "../../src/node/agent";
import { EventStreamClient, getJson, type LineClient, registerNode, tempDir, until, WsClient } from "../helpers";
import { FAST } from "../node/node-helpers";
import { clusterName, dropCluster, NATS_URL, numbered, sharedDatabase, storedPerProducer } from "./helpers";
import { AckedProducer, spawnCore, type CoreProcess } from "./processes";
import { BEAT_MS } from "../../src/cluster/presence";

describe("three instances", () => {
  const cluster = clusterName();
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  const procs: CoreProcess[] = [];
  let a: CoreProcess, b: CoreProcess, c: CoreProcess;

  beforeAll(async () => {
    db = await sharedDatabase();
    [a, b, c] = (await Promise.all([0, 1, 2].map(() => spawnCore({ db: db.url, bus: NATS_URL, cluster })))) as [CoreProcess, CoreProcess, CoreProcess];
    procs.push(a, b, c);
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGTERM").catch(() => {})));
    await dropCluster(cluster);
    await db?.drop();
  });

  test("events sent to A reach a feed client on C and the REST of B, with the same ids", async () => {
    const feed = await WsClient.connect(`${c.ws}/?kinds=PotEvent&event_type=test.feed`);
    using producer = await EventStreamClient.connect(a.ports.event, { acks: true });
    const lines = [1, 2, 3].map((i) => JSON.stringify({ eventid: "test.feed", timestamp: new Date().toISOString(), src_ip: "203.0.113.9", n: i, honeybee_honeypot_id: "ssh-a" }));
    producer.send(lines);
    await producer.ack(3);
    const seen: any[] = [];
    for (let i = 0; i < 3; i++) seen.push((await feed.next((m) => m?.message?.PotEvent?.event_type === "test.feed")).message.PotEvent);
    const rest = await until(async () => {
      const r = await getJson(`${b.api}/api/v1/events?event_type=test.feed`);
      return r.body?.events?.length === 3 ? r.body.events : null;
    }, "the events in B's REST");
    expect(seen.map((e) => e.data.n).sort()).toEqual([1, 2, 3]);
    expect(new Set(seen.map((e) => String(e.id)))).toEqual(new Set(rest.map((e: any) => String(e.id))));
    expect(seen.every((e) => e.pot_id === "ssh-a" && e.src_ip === "203.0.113.9")).toBe(true);
    feed.close();
  });

  test("stats on any instance counts the deployment's ingest: events received by A and by B are in C's stats", async () => {
    // What the tests before sent reaches C with each instance's next beat (every 2 s): counted first.
    await Bun.sleep(BEAT_MS * 1.5);
    const before = (await getJson(`${c.api}/api/v1/stats`)).body.ingest.received as number;
    for (const [core, n] of [[a, 4], [b, 3]] as const) {
      using producer = await EventStreamClient.connect(core.ports.event, { acks: true });
      producer.send(Array.from({ length: n }, (_, i) => JSON.stringify({ eventid: "test.count", src_ip: "203.0.113.10", n: i, honeybee_honeypot_id: "ssh-count" })));
      await producer.ack(n);
    }
    // The counters travel with each instance's presence beat (every 2 s).
    const seen = await until(async () => {
      const s = (await getJson(`${c.api}/api/v1/stats`)).body.ingest;
      return s.received - before >= 7 ? s : null;
    }, "A's and B's events in C's counters");
    expect(seen.received - before).toBe(7);
    expect(seen.committed).toBeGreaterThanOrEqual(7);
  });

  test("SIGKILL of the ingest instance in the middle: every acknowledged event is stored exactly once", async () => {
    const d = await spawnCore({ db: db.url, bus: NATS_URL, cluster, roles: "ingest" });
    procs.push(d);
    const n = 20_000;
    // The producers are three spools of one node, registered with D; when D is gone the node
    // registers with A and they go on there, as a node agent fails over. What D had put on the
    // bus but not acknowledged comes again, at the same spool positions.
    const nodeId = 4242n;
    const onD = await registerNode(d, nodeId, "producers");
    let onA: LineClient | null = null;
    const alive = () => d.proc.exitCode === null && d.proc.signalCode === null;
    const producers = ["k1", "k2", "k3"].map((p) => new AckedProducer(() => (alive() ? [d.ports.event] : onA ? [a.ports.event] : []), numbered(p), undefined, undefined, nodeId));
    const running = producers.map((p) => p.run(n));
    await until(() => producers.every((p) => p.acked > 1000), "the first acknowledgements from D");
    await d.kill("SIGKILL");
    onD.close();
    onA = await registerNode(a, nodeId, "producers");
    await Promise.all(running);
    onA.close();
    expect(producers.some((p) => p.reconnects > 0)).toBe(true);
    const stored = await until(async () => {
      const s = await storedPerProducer(db.url);
      return ["k1", "k2", "k3"].every((p) => s[p]?.distinct === n) ? s : null;
    }, "every acknowledged event stored", 3000);
    for (const p of ["k1", "k2", "k3"]) expect(stored![p]).toEqual({ rows: n, distinct: n, max: n });
  });

  test("SIGKILL of a writer in the middle: the others store everything, exactly once", async () => {
    const w = await spawnCore({ db: db.url, bus: NATS_URL, cluster, roles: "writer" });
    procs.push(w);
    const n = 20_000;
    const producer = new AckedProducer(() => [a.ports.event], numbered("w1"));
    const running = producer.run(n);
    await until(() => producer.acked > 2000, "events flowing");
    await w.kill("SIGKILL");
    await running;
    const stored = await until(async () => {
      const s = await storedPerProducer(db.url);
      return s.w1?.distinct === n ? s : null;
    }, "every event stored after the writer's death", 3000);
    expect(stored!.w1).toEqual({ rows: n, distinct: n, max: n });
  });

  test("a node agent on B fails over to C when B is killed; A's REST shows it and its commands follow it", async () => {
    using data = tempDir();
    const logger = createLogger("warn", { destination: { write: () => {} } });
    const node = await startNode({ core: `127.0.0.1:${b.ports.node},127.0.0.1:${c.ports.node}`, events: `127.0.0.1:${b.ports.event},127.0.0.1:${c.ports.event}`, data: data.path, name: "roamer", relay_port: 0, ...FAST }, logger);
    try {
      const nodeUrl = `${a.api}/api/v1/nodes/${node.nodeId}`;
      // A real node reports itself Running once registered.
      const live = (status: string) => status === "Connected" || status === "Running";
      await until(async () => live((await getJson(nodeUrl)).body?.status), "the node live in A's REST");
      await b.kill("SIGKILL");
      // Presence: B's beats stop, C takes the registration.
      await until(async () => {
        const sent = await getJson(`${a.api}/api/v1/nodes/${node.nodeId}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetInstalledPots: null }) });
        if (sent.status !== 202) return null;
        const done = await until(async () => {
          const r = await getJson(`${a.api}/api/v1/commands/${sent.body.command_id}`);
          return r.body?.status !== "sent" && r.body?.status !== "issued" ? r.body : null;
        }, "the command's result");
        return done.status === "succeeded" ? done : null;
      }, "a command from A to reach the node on C", 3000);
      expect(live((await getJson(nodeUrl)).body.status)).toBe(true);
      expect(c.logs.some((l) => l.msg === "node registered" && l.node_id === String(node.nodeId))).toBe(true);
    } finally {
      await node.stop();
    }
  });
  test("a node whose instance dies without a successor becomes Unknown on the others (presence)", async () => {
    using data = tempDir();
    const logger = createLogger("warn", { destination: { write: () => {} } });
    const node = await startNode({ core: `127.0.0.1:${c.ports.node}`, data: data.path, name: "orphan", relay_port: 0, ...FAST }, logger);
    try {
      const nodeUrl = `${a.api}/api/v1/nodes/${node.nodeId}`;
      await until(async () => (await getJson(nodeUrl)).body?.status === "Running", "the node Running in A's REST");
      await c.kill("SIGKILL");
      // Three missed beats of 2 s.
      await until(async () => (await getJson(nodeUrl)).body?.status === "Unknown", "the node Unknown in A's REST", 2000);
      const sent = await getJson(`${nodeUrl}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetInstalledPots: null }) });
      expect({ status: sent.status, code: sent.body.error?.code }).toEqual({ status: 409, code: "node_not_connected" });
    } finally {
      await node.stop();
    }
  });
});
