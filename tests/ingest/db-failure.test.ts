/**
 * A database Core cannot write (a full disk), with a real Core process: `/health` says so and
 * why, and SIGTERM still stops Core in bounded time without acknowledging what it could not
 * commit. The disk is a small tmpfs in a namespace of the test's own (tests/helpers/small-disk.ts).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, EventStreamClient, ROOT, getJson, until } from "../helpers";
import { SmallDisk } from "../helpers/small-disk";

async function spawnCore(disk: SmallDisk, env: Record<string, string> = {}) {
  const argv = [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(disk.dir, "core.db"), "--log-events", "false"];
  const proc = Bun.spawn(disk.argv(argv), { stdout: "pipe", stderr: "pipe", env: { ...process.env, HONEYBEE_LOG_LEVEL: "info", ...env } });
  const lines: any[] = [];
  const reader = proc.stdout.getReader();
  let text = "";
  const started = Promise.withResolvers<{ event: number; api: number }>();
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return started.reject(new Error(`core exited: ${text}`));
      text += new TextDecoder().decode(value);
      let nl: number;
      while ((nl = text.indexOf("\n")) >= 0) {
        const line = JSON.parse(text.slice(0, nl));
        text = text.slice(nl + 1);
        lines.push(line);
        if (line.msg === "core started") started.resolve(line.ports);
      }
    }
  })();
  const ports = await started.promise;
  return { proc, lines, ports, api: `http://127.0.0.1:${ports.api}` };
}

/**
 * Whether every frame of Core's write-ahead log is copied into the database file, asked of
 * SQLite itself (a passive checkpoint from a connection of its own, inside the disk's namespace).
 */
function walCheckpointed(disk: SmallDisk): boolean {
  const script = `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(join(disk.dir, "core.db"))}); console.log(JSON.stringify(db.query("PRAGMA wal_checkpoint(PASSIVE)").get())); db.close();`;
  const r = Bun.spawnSync(disk.argv([BUN, "-e", script]), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`asking SQLite about the log failed: ${r.stderr.toString()}`);
  const { busy, log, checkpointed } = JSON.parse(r.stdout.toString()) as { busy: number; log: number; checkpointed: number };
  return busy === 0 && log === checkpointed;
}

const line = (i: number, pad = "") => `{"eventid":"cowrie.login.failed","src_ip":"203.0.113.9","username":"root","password":"pw${i}","pad":"${pad}"}`;
/** Enough bytes that the write-ahead log must grow: the full disk refuses them. */
const BIG = Array.from({ length: 5000 }, (_, i) => line(1000 + i, "p".repeat(1000)));

test("a writer that cannot write makes /health 503 with the reason, logged, until writing works again", async () => {
  using disk = await SmallDisk.open(16);
  const core = await spawnCore(disk, { HONEYBEE_SHUTDOWN_TIMEOUT_MS: "3000" });
  try {
    const sender = await EventStreamClient.connect(core.ports.event, { acks: true });
    sender.send(Array.from({ length: 100 }, (_, i) => line(i)));
    await sender.ack(100);
    expect(await getJson(`${core.api}/health`)).toMatchObject({ status: 200, body: { status: "ok" } });

    disk.fill();
    sender.send(BIG);
    const sick = await until(async () => {
      const r = await getJson(`${core.api}/health`);
      return r.status === 503 && r.body.reason.startsWith("committing events fails") && r;
    }, "/health to say that events are not committed", 3000);
    // The checkpointer, when it had log pages to copy, cannot grow the database file either.
    const reason = /^committing events fails: database or disk is full; \d+ events wait \(received, not acknowledged\)(; checkpointing the WAL fails: database or disk is full)?$/;
    expect(sick.body).toEqual({ status: "unhealthy", reason: expect.stringMatching(reason) });
    const errors = core.lines.filter((l) => l.level === 50).map((l) => `${l.msg} (${l.err})`);
    expect(errors).toContain("committing events failed: Core is unhealthy until a commit succeeds; retrying (database or disk is full)");
    for (const e of errors) expect(["committing events failed", "the WAL checkpointer failed"]).toContain(e.split(":")[0]!);
    expect(sender.acked).toBeLessThan(100 + BIG.length);

    disk.free();
    await sender.ack(100 + BIG.length);
    // The checkpoint that follows the last commit turns the rest of it healthy.
    await until(async () => (await getJson(`${core.api}/health`)).text === '{"status":"ok"}', "/health to be ok again", 3000);
    expect(core.lines.some((l) => l.msg === "committing events works again")).toBe(true);
    sender.close();
  } finally {
    core.proc.kill("SIGTERM");
    await core.proc.exited;
  }
}, 60_000);

test("a WAL checkpoint that fails makes /health 503 although commits still work, until checkpoints work again", async () => {
  using disk = await SmallDisk.open(16);
  const core = await spawnCore(disk, { HONEYBEE_SHUTDOWN_TIMEOUT_MS: "3000" });
  try {
    const sender = await EventStreamClient.connect(core.ports.event, { acks: true });
    // 3 MB of events, and their checkpoint: it grows the database file by as much.
    sender.send(Array.from({ length: 3000 }, (_, i) => line(i, "p".repeat(1000))));
    await sender.ack(3000);
    await until(() => disk.size("core.db") > 3_000_000, "the checkpoint into the database file", 3000);
    // Once every frame of the log is in the database file, the next commit starts the log over
    // in the space it has: later commits need no new disk space, but copying new rows into the
    // database file does. (Filling the disk before that point made a commit append to the log
    // and fail: the test stalled now and then under load.)
    // Each try asks SQLite in a process of its own (~50 ms): 400 tries are 20 s or more.
    await until(() => walCheckpointed(disk), "SQLite's log checkpointed into the database file", 400);
    sender.send(line(4000));
    await sender.ack(3001);
    disk.fill();
    // Few and small: they fit in the log's old space whatever else a commit writes (sessions, addresses).
    sender.send(Array.from({ length: 30 }, (_, i) => line(5000 + i, "q".repeat(100))));
    await sender.ack(3031);
    const sick = await until(async () => {
      const r = await getJson(`${core.api}/health`);
      return r.status === 503 ? r : null;
    }, "/health to turn unhealthy", 3000);
    expect(sick!.body).toEqual({ status: "unhealthy", reason: "checkpointing the WAL fails: database or disk is full" });
    expect(core.lines.filter((l) => l.level === 50)).toEqual([
      expect.objectContaining({ component: "ingest", err: "checkpointing the WAL fails: database or disk is full", msg: "the WAL checkpointer failed: Core is unhealthy and the write-ahead log grows until it works again" }),
    ]);

    disk.free();
    sender.send(line(9999));
    await sender.ack(3032);
    await until(async () => (await getJson(`${core.api}/health`)).text === '{"status":"ok"}', "/health to be ok again", 3000);
    expect(core.lines.some((l) => l.msg === "checkpointing the WAL works again")).toBe(true);
    sender.close();
  } finally {
    core.proc.kill("SIGTERM");
    await core.proc.exited;
  }
}, 60_000);

test("SIGTERM with a database that cannot be written stops within shutdown_timeout_ms and acknowledges nothing it did not commit", async () => {
  using disk = await SmallDisk.open(16);
  const core = await spawnCore(disk, { HONEYBEE_SHUTDOWN_TIMEOUT_MS: "1500" });
  const sender = await EventStreamClient.connect(core.ports.event, { acks: true });
  sender.send(Array.from({ length: 100 }, (_, i) => line(i)));
  await sender.ack(100);
  disk.fill();
  sender.send(BIG);
  await until(async () => (await getJson(`${core.api}/health`)).status === 503, "/health to turn unhealthy", 3000);

  const t0 = Date.now();
  core.proc.kill("SIGTERM");
  const code = await Promise.race([core.proc.exited, new Promise<string>((r) => setTimeout(() => r("still running after 20 s"), 20_000))]);
  if (code !== 1) core.proc.kill("SIGKILL");
  expect(code).toBe(1);
  expect(Date.now() - t0).toBeLessThan(10_000);
  const stderr = await new Response(core.proc.stderr).text();
  expect(stderr).toMatch(/^honeybee: error while stopping after SIGTERM: \d+ received events were not committed \(database or disk is full\)\. None of them was acknowledged: nodes keep them in their spools and send them again when Core is back; /);
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(core.lines.find((l) => l.level === 50 && /were not committed/.test(l.msg))).toMatchObject({ component: "ingest", err: "database or disk is full" });
  sender.close();

  // What was acknowledged is exactly what the database holds; the rest the sender still has.
  expect(sender.acked).toBeLessThan(100 + BIG.length);
  disk.free();
  const again = await spawnCore(disk);
  try {
    expect((await getJson(`${again.api}/api/v1/stats?window=366d`)).body.total_events).toBe(sender.acked);
  } finally {
    again.proc.kill("SIGTERM");
    expect(await again.proc.exited).toBe(0);
  }
}, 60_000);
