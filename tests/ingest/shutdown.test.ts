import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, EventStreamClient, ROOT, getJson, tempDir } from "../helpers";

/** Runs `honeybee core` as its own process on ports 0; resolves once it logged "core started". */
async function spawnCore(db: string) {
  const proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", db, "--log-level", "info", "--log-events", "false"],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, HONEYBEE_LOG_LEVEL: "info" } },
  );
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`core exited before starting: ${text}${await new Response(proc.stderr).text()}`);
    text += new TextDecoder().decode(value);
    const line = text.split("\n").find((l) => l.includes('"core started"'));
    if (line) {
      // Keep reading so Core never blocks on a full pipe.
      void (async () => {
        while (!(await reader.read()).done);
      })();
      const ports = JSON.parse(line).ports as { event: number; api: number };
      return { proc, ports, api: `http://127.0.0.1:${ports.api}` };
    }
  }
}

test("SIGTERM loses nothing: what the sockets delivered is committed before Core exits", async () => {
  using dir = tempDir();
  const db = join(dir.path, "core.db");
  const first = await spawnCore(db);
  const N = 20_000;
  // Senders that never wait for acks (Cowrie's output plugin, a PHP forwarder), two at once.
  const a = await EventStreamClient.connect(first.ports.event);
  const b = await EventStreamClient.connect(first.ports.event);
  const line = (i: number) => `{"eventid":"cowrie.login.failed","src_ip":"203.0.113.${i % 200}","username":"root","password":"pw${i}","timestamp":${1795309499 + i}}`;
  a.send(Array.from({ length: N / 2 }, (_, i) => line(i)));
  b.send(Array.from({ length: N / 2 }, (_, i) => line(N / 2 + i)));
  await Promise.all([a.written(), b.written()]);
  first.proc.kill("SIGTERM");
  expect(await first.proc.exited).toBe(0);

  const second = await spawnCore(db);
  try {
    const stats = await getJson(`${second.api}/api/v1/stats?window=366d`);
    expect(stats.body.total_events).toBe(N);
    expect(stats.body.top.usernames).toEqual([{ value: "root", count: N }]);
    const page = await getJson(`${second.api}/api/v1/events?limit=1`);
    expect(page.body.events[0].id).toBe(N);
  } finally {
    second.proc.kill("SIGTERM");
    await second.proc.exited;
  }
});
