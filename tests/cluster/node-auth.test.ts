/**
 * Node authentication across instances, on PostgreSQL + NATS: a node enrolled on one instance
 * proves itself on another at once; a TOTP step one instance accepted is a replay on the
 * others; a real node that fails over with authentication on is accepted by the next instance,
 * and by the first when it comes back.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TOTP_PERIOD_S, totpCode } from "../../src/protocol/totp";
import { stringify } from "../../src/protocol/json";
import { createLogger } from "../../src/log";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { BIG_ID, getJson, LineClient, startTestCore, tempDir, type TestCore } from "../helpers";
import { openPgDatabase } from "../../src/db/pg";
import { scratchDatabaseOn } from "../helpers/postgres";
import { startPrivatePg } from "../helpers/private-pg";
import { FAST } from "../node/node-helpers";
import { clusterName, dropCluster, NATS_URL, sharedDatabase, storedPerProducer, until } from "./helpers";
import { spawnCore, type CoreProcess } from "./processes";

const ENROLL = "enroll-secret-for-cluster-tests";
const currentStep = () => Math.floor(Date.now() / 1000 / TOTP_PERIOD_S);
const codeAt = (key: string, step: number) => totpCode(key, step * TOTP_PERIOD_S * 1000);
const wire = (kind: string, payload: unknown) => `${stringify({ version: 2, message: { [kind]: payload } })}\n`;

async function register(core: { ports: { node: number } }, nodeId: bigint, proof: Record<string, string>) {
  using c = await LineClient.connect(core.ports.node);
  c.send("NodeRegistration", { node_id: nodeId, node_name: "sensor", address: "127.0.0.1", port: 0, node_type: "Full", ...proof });
  return await c.nextKind("RegistrationAck");
}

/** Opens an event stream with `code`: the first event's EventAck, or the refusal. */
async function openStream(core: { ports: { event: number } }, nodeId: bigint, code: string) {
  using c = await LineClient.connect(core.ports.event);
  c.send("EventStreamHello", { node_id: nodeId, acks: true, totp_code: code });
  c.sendRaw(`${JSON.stringify({ eventid: "cowrie.login.failed", src_ip: "203.0.113.9", pot_id: "p" })}\n`);
  const m = await c.next();
  return m.message.EventAck ? { acked: m.message.EventAck.seq } : { refused: m.message.Error.message };
}

describe("two instances with node authentication", () => {
  const cluster = clusterName();
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  let a: TestCore, b: TestCore;

  beforeAll(async () => {
    db = await sharedDatabase();
    const start = () => startTestCore({ db: db.url, bus: NATS_URL, cluster, node_enrollment_token: ENROLL, auth_failures_per_minute: 100 });
    [a, b] = await Promise.all([start(), start()]);
  });
  afterAll(async () => {
    await Promise.all([a, b].map((x) => x?.stop()));
    await dropCluster(cluster);
    await db?.drop();
  });

  test("a node enrolled on A registers and opens its event stream on B, B not restarted", async () => {
    const id = BIG_ID - 10n;
    const enrolled = await register(a, id, { enrollment_token: ENROLL });
    expect(enrolled).toMatchObject({ accepted: true, message: "registered and enrolled" });
    const step = currentStep();
    expect(await register(b, id, { totp_code: codeAt(enrolled.totp_key, step) })).toEqual({ node_id: id, accepted: true, message: "registered" });
    expect(await openStream(b, id, codeAt(enrolled.totp_key, step))).toEqual({ acked: 1 });
  });

  test("a step accepted by one instance is refused by the other as a replay; the next step is accepted", async () => {
    const id = BIG_ID - 11n;
    const key = (await register(b, id, { enrollment_token: ENROLL })).totp_key;
    const step = currentStep();
    const outcome = (ack: { accepted: boolean; message: string }) => (ack.accepted ? "accepted" : ack.message.includes("already used") ? "replay" : ack.message);
    const control = {
      onA: outcome(await register(a, id, { totp_code: codeAt(key, step) })),
      againOnB: outcome(await register(b, id, { totp_code: codeAt(key, step) })),
      nextOnB: outcome(await register(b, id, { totp_code: codeAt(key, step + 1) })),
      nextAgainOnA: outcome(await register(a, id, { totp_code: codeAt(key, step + 1) })),
    };
    const stream = async (core: TestCore, s: number) => {
      const r = await openStream(core, id, codeAt(key, s));
      return "acked" in r ? "accepted" : r.refused.includes("already used") ? "replay" : r.refused;
    };
    const events = { onB: await stream(b, step), againOnA: await stream(a, step), nextOnA: await stream(a, step + 1) };
    expect({ control, events }).toEqual({
      control: { onA: "accepted", againOnB: "replay", nextOnB: "accepted", nextAgainOnA: "replay" },
      events: { onB: "accepted", againOnA: "replay", nextOnA: "accepted" },
    });
  });

  test("what a node sends right behind its registration and its hello waits for the check, and is taken in order", async () => {
    const id = BIG_ID - 13n;
    const key = (await register(a, id, { enrollment_token: ENROLL })).totp_key;
    const step = currentStep();
    using control = await LineClient.connect(b.ports.node);
    const reg = { node_id: id, node_name: "eager", address: "127.0.0.1", port: 0, node_type: "Full", totp_code: codeAt(key, step) };
    const status = { node_id: id, pot_id: "eager-pot", pot_type: "cowrie", status: "Running" };
    control.sendRaw(wire("NodeRegistration", reg) + wire("PotStatusUpdate", status));
    expect(await control.nextKind("RegistrationAck")).toMatchObject({ accepted: true });
    const pot = await until(async () => (await getJson(`${b.api}/api/v1/nodes/${id}`)).body?.honeypots?.find((p: any) => p.pot_id === "eager-pot"), "the pot reported behind the registration");
    expect(pot.status).toBe("Running");
    using events = await LineClient.connect(b.ports.event);
    const line = (n: number) => JSON.stringify({ eventid: "cowrie.login.failed", src_ip: "203.0.113.9", pot_id: "eager-pot", n });
    events.sendRaw(`${wire("EventStreamHello", { node_id: id, acks: true, totp_code: codeAt(key, step) })}${line(1)}\n${line(2)}\n${line(3)}\n`);
    expect(await events.nextKind("EventAck")).toEqual({ seq: 3 });
  });

  test("two instances enrolling one node_id at once: one enrolls it, the other refuses", async () => {
    const id = BIG_ID - 12n;
    const acks = await Promise.all([a, b].map((x) => register(x, id, { enrollment_token: ENROLL })));
    expect(acks.map((x) => x.accepted).sort()).toEqual([false, true]);
    const key = acks.find((x) => x.accepted)!.totp_key;
    expect(await register(a, id, { totp_code: codeAt(key, currentStep()) })).toMatchObject({ accepted: true });
  });
});

describe("a real node with --core a,b and node authentication", () => {
  const cluster = clusterName();
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  const procs: CoreProcess[] = [];
  const env = { HONEYBEE_NODE_ENROLLMENT_TOKEN: ENROLL };

  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill("SIGKILL").catch(() => {})));
    await dropCluster(cluster);
    await db?.drop();
  });

  /** Flat honeypot events numbered from..to-1, written to the node's relay as a honeypot does. */
  async function produce(node: NodeHandle, from: number, to: number) {
    using pot = await LineClient.connect(node.ports.relay);
    const lines: string[] = [];
    for (let seq = from; seq < to; seq++) lines.push(`${JSON.stringify({ eventid: "test.auth-failover", pot_id: "gen", producer: "roamer", seq, src_ip: "203.0.113.7", timestamp: new Date(Date.UTC(2026, 0, 1) + seq).toISOString() })}\n`);
    pot.sendRaw(lines.join(""));
    await until(() => node.relay.counters.accepted >= to, `${to} events at the relay`);
    await node.forwarder.drained();
  }

  test("SIGKILL of the instance it holds for 15 s: the other accepts it, then the first when it returns; nothing refused", async () => {
    const a = await spawnCore({ db: db.url, bus: NATS_URL, cluster, env });
    const b = await spawnCore({ db: db.url, bus: NATS_URL, cluster, env });
    procs.push(a, b);
    using data = tempDir();
    const logger = createLogger("warn", { destination: { write: () => {} } });
    const node = await startNode({ core: `127.0.0.1:${a.ports.node},127.0.0.1:${b.ports.node}`, events: `127.0.0.1:${a.ports.event},127.0.0.1:${b.ports.event}`, data: data.path, name: "roamer", relay_port: 0, enrollment_token: ENROLL, ...FAST }, logger);
    const registrations = (core: CoreProcess) => core.logs.filter((l) => l.msg === "node registered" && l.node_id === String(node.nodeId)).length;
    try {
      await until(() => registrations(a) === 1, "the first instance to accept the node");
      expect(registrations(b)).toBe(0);
      await produce(node, 0, 100);

      await a.kill("SIGKILL");
      const down = Date.now();
      await until(() => registrations(b) === 1, "the other instance to accept the node");
      await produce(node, 100, 200);
      // The outage of the report: long enough for a node that spends a step per attempt to run far ahead.
      await Bun.sleep(Math.max(0, 15_000 - (Date.now() - down)));
      const back = await spawnCore({ db: db.url, bus: NATS_URL, cluster, env, ports: { node: a.ports.node, event: a.ports.event } });
      procs.push(back);
      await b.kill("SIGKILL");
      await until(() => registrations(back) === 1, "the first instance, back, to accept the node");
      await produce(node, 200, 300);

      const refusals = [a, b, back].flatMap((core) => core.logs.filter((l) => /refused/.test(l.msg ?? "")).map((l) => l.msg));
      expect(refusals).toEqual([]);
      const stored = await until(async () => {
        const s = (await storedPerProducer(db.url)).roamer;
        return s?.distinct === 300 && s;
      }, "the writers to store every event");
      expect(stored).toMatchObject({ distinct: 300, max: 299 });
    } finally {
      await node.stop();
    }
  });
});

describe("PostgreSQL away", () => {
  test("a registration is refused for now, not counted against the node, which is accepted once the database is back", async () => {
    await using pg = await startPrivatePg();
    const url = (await scratchDatabaseOn(pg.url, "nodeauth")).url;
    await (await openPgDatabase(url)).$client.close();
    const cluster = clusterName();
    // One failure per minute: a refusal counted against the node would lock it out.
    const core = await spawnCore({ db: url, bus: NATS_URL, cluster, env: { HONEYBEE_NODE_ENROLLMENT_TOKEN: ENROLL, HONEYBEE_AUTH_FAILURES_PER_MINUTE: "1" } });
    using data = tempDir();
    const config = { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: data.path, name: "patient", relay_port: 0, ...FAST };
    const registrations = () => core.logs.filter((l) => l.msg === "node registered").length;
    try {
      const enrolled = await startNode({ ...config, enrollment_token: ENROLL }, createLogger("silent"));
      await enrolled.registered();
      await enrolled.stop();
      await until(() => registrations() === 1, "the enrollment in Core's log");
      await pg.stop();
      const node = await startNode(config, createLogger("silent"));
      try {
        await until(() => core.logs.filter((l) => /^registration refused: cannot check/.test(l.msg ?? "")).length >= 3, "refusals while PostgreSQL is away");
        await pg.start();
        await until(() => registrations() === 2, "the node accepted once PostgreSQL is back");
        expect(core.logs.filter((l) => /too many failed/.test(l.msg ?? "")).map((l) => l.msg)).toEqual([]);
      } finally {
        await node.stop();
      }
    } finally {
      await core.kill("SIGKILL");
      await dropCluster(cluster);
    }
  });
});
