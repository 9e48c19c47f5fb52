/**
 * Settings of several instances that cannot work are refused at start with the setting named,
 * before anything listens (docs/scale-out.md).
 */
import { expect, test } from "bun:test";
import { ConfigError, loadCoreConfig } from "../../src/config";
import { startCore } from "../../src/core";
import { createLogger, silentLogger } from "../../src/log";
import { BUN, EventStreamClient, getJson, ROOT, settled, startTestCore } from "../helpers";
import { clusterName, dropCluster, NATS_URL, sharedDatabase } from "./helpers";

const start = (o: Record<string, unknown>) => startCore({ host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, db: ":memory:", ...o }, silentLogger());

test("roles other than all four need the bus", async () => {
  const e = await start({ roles: "ingest,api" }).catch((err) => err);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toContain("need the bus");
});

test("the bus needs PostgreSQL", async () => {
  const e = await start({ bus: "nats://127.0.0.1:4222" }).catch((err) => err);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toContain("PostgreSQL");
});

test("an unknown role or a cluster name with a dot is a config error naming the setting", () => {
  expect(() => loadCoreConfig({ roles: "ingest,reader" }, {})).toThrow(/roles/);
  expect(() => loadCoreConfig({ cluster: "a.b" }, {})).toThrow(/cluster/);
});

test("honeybee core --roles writer without --bus exits 1 (a bad setting) with one line that says why", async () => {
  const proc = Bun.spawn([BUN, "src/main.ts", "core", "--roles", "writer", "--db", ":memory:"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(out + err).toContain("need the bus");
});

test("in a cluster every event fits in one message of the bus: a longer line is refused at the socket, the stream goes on", async () => {
  const db = await sharedDatabase();
  const cluster = clusterName();
  const lines: string[] = [];
  const logger = createLogger("info", { destination: { write: (l: string) => void lines.push(l) } });
  try {
    await using core = await startTestCore({ db: db.url, bus: NATS_URL, cluster }, logger);
    // The default max_message_bytes is NATS's default max_payload: no room left for the envelope.
    expect(core.config.max_message_bytes).toBeLessThan(1024 * 1024);
    expect(lines.some((l) => l.includes("max_message_bytes lowered"))).toBe(true);
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const big = JSON.stringify({ eventid: "test.big", src_ip: "203.0.113.1", pad: "x".repeat(1024 * 1024 - 2000) });
    const small = JSON.stringify({ eventid: "test.small", src_ip: "203.0.113.2", n: 1 });
    c.send([big, small]);
    await c.ack(2);
    await settled(core);
    const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
    expect({ rejected: stats.ingest.rejected, committed: stats.ingest.committed }).toEqual({ rejected: 1, committed: 1 });
    expect((await getJson(`${core.api}/api/v1/events?event_type=test.small`)).body.events.length).toBe(1);
    expect((await getJson(`${core.api}/health`)).status).toBe(200);
  } finally {
    await dropCluster(cluster);
    await db.drop();
  }
});
