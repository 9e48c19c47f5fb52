/**
 * One Core on a private PostgreSQL that stops: REST reads that need the database answer 503
 * database_unavailable with a Retry-After (not 500), and 200 again once it is back. Core runs
 * as its own process, as in tests/cluster/postgres-outage.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { EventStreamClient, getJson, until } from "../helpers";
import { startPrivatePg, type PrivatePg } from "../helpers/private-pg";
import { spawnCore, type CoreProcess } from "../cluster/processes";
import { startCore } from "../../src/core";

let pg: PrivatePg;
let core: CoreProcess | undefined;

beforeAll(async () => {
  pg = await startPrivatePg();
});
afterAll(async () => {
  await core?.kill("SIGTERM").catch(() => {});
  await pg?.destroy();
});

test("PostgreSQL stopped: reads answer 503 database_unavailable with Retry-After, then 200 again", async () => {
  const c = await spawnCore({ db: pg.url });
  core = c;
  const reads = ["/api/v1/events", "/api/v1/commands/1", "/api/v1/commands", "/api/v1/stats"];
  expect((await getJson(`${c.api}/api/v1/events`)).status).toBe(200);
  await pg.stop();
  for (const path of reads) {
    const r = await getJson(`${c.api}${path}`);
    expect({ path, status: r.status, code: r.body?.error?.code, retryAfter: r.headers.get("retry-after") }).toEqual({ path, status: 503, code: "database_unavailable", retryAfter: "5" });
    expect(r.body.error.message).toContain("PostgreSQL");
  }
  expect((await getJson(`${c.api}/api/v1/honeypots`)).status).toBe(200);
  expect(c.logs.filter((l) => /database is unreachable/.test(l.msg ?? "")).length).toBe(1);
  await pg.start();
  await until(async () => (await getJson(`${c.api}/api/v1/events`)).status === 200, "events to answer again");
  expect((await getJson(`${c.api}/api/v1/commands/1`)).status).toBe(404);
  expect(c.proc.exitCode).toBeNull();
});

test("an in-process Core outlives PostgreSQL stopping: events sent meanwhile are acknowledged once it is back, and it stops cleanly", async () => {
  await using own = await startPrivatePg();
  const core = await startCore({ db: own.url, host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, log_level: "silent", log_events: false });
  try {
    const api = `http://127.0.0.1:${core.ports.api}`;
    const events = await EventStreamClient.connect(core.ports.event, { acks: true });
    try {
      events.send([`{"eventid":"outage.before","src_ip":"10.0.0.1"}`]);
      await events.ack(1);
      await own.stop();
      events.send([`{"eventid":"outage.during","src_ip":"10.0.0.2"}`]);
      await until(async () => (await getJson(`${api}/health`)).status === 503, "/health to report the outage");
      expect((await getJson(`${api}/api/v1/events`)).body.error.code).toBe("database_unavailable");
      await own.start();
      await events.ack(2);
      expect((await getJson(`${api}/api/v1/events`)).body.events.map((e: { event_type: string }) => e.event_type)).toEqual(["outage.during", "outage.before"]);
      expect((await getJson(`${api}/health`)).status).toBe(200);
    } finally {
      events.socket.end();
    }
  } finally {
    await core.stop();
  }
});
