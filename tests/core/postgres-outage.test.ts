/**
 * One Core on a private PostgreSQL that stops: REST reads that need the database answer 503
 * database_unavailable with a Retry-After (not 500), and 200 again once it is back. Core runs
 * as its own process, as in tests/cluster/postgres-outage.test.ts.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { BIG_ID, EventStreamClient, getJson, registerNode, until } from "../helpers";
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

test("writes made while PostgreSQL is stopped are stored once it is back: a pot installed, commands and their results; a restarted Core and the tables agree", async () => {
  await using own = await startPrivatePg();
  const c = await spawnCore({ db: own.url });
  try {
    using node = await registerNode(c);
    const post = (body: unknown) => getJson(`${c.api}/api/v1/nodes/${BIG_ID}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    await own.stop();
    const sent: string[] = [];
    for (const command of [{ InstallPot: { pot_id: "ssh-09", honeypot_type: "cowrie", config: {}, auto_start: true } }, { StopPot: "ssh-09" }, { GetPotStatus: "ssh-09" }]) {
      const res = await post(command);
      expect(res.status).toBe(202);
      const reached = await node.nextKind("NodeCommand");
      expect(reached.command_id).toBe(res.body.command_id);
      sent.push(res.body.command_id);
      node.send("CommandResult", { command_id: res.body.command_id, node_id: BIG_ID, ok: true, message: "done" });
    }
    node.send("PotStatusUpdate", { node_id: BIG_ID, pot_id: "ssh-09", pot_type: "cowrie", status: "Stopped" });
    // While it is away, a read of the records says so rather than wait.
    const during = await getJson(`${c.api}/api/v1/commands/${sent[0]}`);
    expect({ status: during.status, code: during.body.error?.code }).toEqual({ status: 503, code: "database_unavailable" });
    await until(() => c.logs.some((l) => /registry and command writes wait/.test(l.err?.message ?? l.msg ?? "")), "the stall to be logged");
    await own.start();
    for (const id of sent) {
      await until(async () => (await getJson(`${c.api}/api/v1/commands/${id}`)).body.status === "succeeded", `command ${id} stored with its result`);
    }
    const sql = new SQL(own.url, { max: 1 });
    try {
      await until(async () => (await sql`select status from honeypots where pot_id = 'ssh-09'`)[0]?.status === "Stopped", "the pot's row");
      expect((await sql`select count(*)::int as n from commands where status = 'succeeded'`)[0].n).toBe(3);
    } finally {
      await sql.close();
    }
  } finally {
    await c.kill("SIGTERM");
  }
  // A Core started afresh reads the same registry and records.
  const again = await spawnCore({ db: own.url });
  try {
    expect((await getJson(`${again.api}/api/v1/honeypots`)).body.honeypots.map((p: { pot_id: string; status: string }) => [p.pot_id, p.status])).toEqual([["ssh-09", "Stopped"]]);
    expect((await getJson(`${again.api}/api/v1/commands`)).body.commands.map((r: { status: string }) => r.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  } finally {
    await again.kill("SIGTERM");
  }
});
