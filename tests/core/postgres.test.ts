/**
 * Every feature's tests again, on PostgreSQL and on PostgreSQL + NATS JetStream
 * (HONEYBEE_TEST_DB=postgres / cluster, see tests/helpers/postgres.ts), so that every `npm test`
 * holds each backend to the same contract. The suite is not a list to keep: it is every test
 * file of the feature folders that starts its Core through startTestCore (which follows the
 * switch), but for the few that are about something else (tests/helpers/backend-runs.ts).
 * Each backend runs in a child `bun test` (the switch is per process); `npm test` starts them
 * as the suite starts, one after the other beside it, which keeps it within its time.
 */
import { beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { readFileSync } from "node:fs";
import { backendRuns, backendSuite, NOT_A_BACKEND_TEST, type Run } from "../helpers/backend-runs";
import { BIG_ID, BUN, EventStreamClient, getJson, registerNode, ROOT, startTestCore, waitForEvents } from "../helpers";
import { PG_ADMIN_URL, PG_START_HINT, scratchDatabase } from "../helpers/postgres";

function expectPassed(run: Run) {
  // The whole report on failure: which test, and why.
  if (run.code !== 0) console.error(run.report);
  expect({ code: run.code, failed: /^\s*(\d+) fail$/m.exec(run.report)?.[1], ran: new RegExp(`Ran (\\d+) tests across ${run.files} files`).test(run.report) }).toEqual({ code: 0, failed: "0", ran: true });
}

let runs: ReturnType<typeof backendRuns>;

beforeAll(async () => {
  const probe = new SQL(PG_ADMIN_URL, { max: 1, connectionTimeout: 5 });
  try {
    await probe`select 1`;
  } catch (e) {
    throw new Error(`PostgreSQL does not answer at ${PG_ADMIN_URL} (${(e as Error).message}); ${PG_START_HINT}`);
  } finally {
    await probe.close().catch(() => {});
  }
  // Started with the suite by `npm test` (tests/setup.ts); here when this file runs alone.
  runs = backendRuns();
});

test("the backend suite is every feature test that starts a Core, and names why each other file is left out", () => {
  const suite = backendSuite();
  expect(suite.length).toBeGreaterThan(40);
  for (const f of ["tests/core/api.test.ts", "tests/sessions/sessions-api.test.ts", "tests/artifacts/artifacts.test.ts", "tests/console/console.test.ts", "tests/cli/events.test.ts"]) expect(suite).toContain(f);
  for (const f of Object.keys(NOT_A_BACKEND_TEST)) expect(readFileSync(`${ROOT}/${f}`, "utf8").length).toBeGreaterThan(0);
});

test("every feature's tests pass on PostgreSQL", async () => expectPassed(await runs.postgres), 1_200_000);

test("every feature's tests pass on PostgreSQL + NATS JetStream", async () => expectPassed(await runs.cluster), 1_200_000);

/** `honeybee core` as an operator starts it, on port 0 everywhere; resolves once it listens. */
async function honeybeeCore(db: string) {
  const proc = Bun.spawn([BUN, "src/main.ts", "core", "--db", db, "--host", "127.0.0.1", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--log-level", "info", "--log-events=false"], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`core exited before starting: ${text}${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
    const line = text.split("\n").find((l) => l.includes('"core started"'));
    if (line) {
      void (async () => {
        while (!(await reader.read()).done);
      })();
      const started = JSON.parse(line);
      return { proc, started, log: text, ports: started.ports as { node: number; api: number; ws: number; event: number }, api: `http://127.0.0.1:${started.ports.api}` };
    }
  }
}

test("honeybee core --db postgres://... stores there: events, counters and nodes outlive a restart", async () => {
  const db = await scratchDatabase("honeybee_test");
  try {
    const first = await honeybeeCore(db.url);
    try {
      expect(first.started.db).toBe(db.url);
      using honeypot = await EventStreamClient.connect(first.ports.event);
      honeypot.send(JSON.stringify({ eventid: "cowrie.login.failed", timestamp: new Date().toISOString(), src_ip: "203.0.113.7", username: "root", password: "123456", honeybee_honeypot_id: "ssh-01" }));
      await waitForEvents(first, 1);
      using _node = await registerNode({ ports: first.ports } as never);
      expect((await getJson(`${first.api}/api/v1/nodes`)).body.nodes.map((n: any) => n.status)).toEqual(["Connected"]);
    } finally {
      first.proc.kill("SIGTERM");
      await first.proc.exited;
    }
    const second = await honeybeeCore(db.url);
    try {
      const events = (await getJson(`${second.api}/api/v1/events?src_ip=203.0.113.7`)).body.events;
      expect(events.map((e: any) => [e.event_type, e.pot_id, e.data])).toEqual([["cowrie.login.failed", "ssh-01", { username: "root", password: "123456" }]]);
      expect((await getJson(`${second.api}/api/v1/nodes`)).body.nodes.map((n: any) => [n.node_name, n.status])).toEqual([["sensor-1", "Unknown"]]);
      expect((await getJson(`${second.api}/api/v1/stats`)).body.top.usernames).toEqual([{ value: "root", count: 1 }]);
      // In PostgreSQL itself, not in a file of that name.
      const direct = new SQL(db.url, { max: 1 });
      try {
        expect(await direct`select (select count(*)::int from events) as events, (select count(*)::int from nodes) as nodes`).toEqual([{ events: 1, nodes: 1 }]);
      } finally {
        await direct.close();
      }
    } finally {
      second.proc.kill("SIGTERM");
      await second.proc.exited;
    }
  } finally {
    await db.drop();
  }
});

test("a command still open when Core restarts is closed by the node's result after it: the open records are loaded at start", async () => {
  const db = await scratchDatabase("honeybee_test");
  try {
    let commandId: string;
    {
      await using core = await startTestCore({ db: db.url });
      using node = await registerNode(core);
      const res = await fetch(`${core.api}/api/v1/nodes/${BIG_ID}/commands`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ GetPotStatus: "ssh-01" }) });
      commandId = ((await res.json()) as { command_id: string }).command_id;
      expect((await node.nextKind("NodeCommand")).command_id).toBe(commandId);
    }
    await using core = await startTestCore({ db: db.url });
    using node = await registerNode(core);
    const seen = Promise.withResolvers<any>();
    core.bus.subscribe((m) => m.kind === "CommandResult" && seen.resolve(m.payload));
    node.send("CommandResult", { command_id: commandId, node_id: BIG_ID, ok: true, message: "ssh-01 is Running" });
    await seen.promise;
    expect((await getJson(`${core.api}/api/v1/commands/${commandId}`)).body).toMatchObject({ command_id: commandId, status: "succeeded", message: "ssh-01 is Running" });
  } finally {
    await db.drop();
  }
});

test("on PostgreSQL every feature starts: no line at start leaves one out, and no route answers 501", async () => {
  const db = await scratchDatabase("honeybee_test");
  try {
    const core = await honeybeeCore(db.url);
    try {
      expect(core.log).not.toContain("not available on PostgreSQL");
      const answers = [];
      for (const path of ["/api/v1/outputs", "/api/v1/rules/brute-force", "/api/v1/sessions"]) {
        const res = await getJson(`${core.api}${path}`);
        answers.push([path, res.status]);
      }
      expect(answers).toEqual([
        ["/api/v1/outputs", 200],
        ["/api/v1/rules/brute-force", 404],
        ["/api/v1/sessions", 200],
      ]);
      // What PostgreSQL has keeps working beside them.
      const stats = await getJson(`${core.api}/api/v1/stats`);
      expect([stats.status, stats.body.total_events, stats.body.top.countries, stats.body.top.commands, stats.body.outputs]).toEqual([200, 0, [], [], []]);
    } finally {
      core.proc.kill("SIGTERM");
      await core.proc.exited;
    }
  } finally {
    await db.drop();
  }
});
