/**
 * A damaged database page found while answering a query: a 500 in the error shape, and a log
 * line that names the file and `PRAGMA integrity_check`, instead of a bare SQLiteError.
 */
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { openSync, closeSync, writeSync } from "node:fs";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { EventStreamClient, getJson, startTestCore, tempDir } from "../helpers";

test("a damaged page hit by GET /api/v1/events answers 500 database_corrupt and logs what to run", async () => {
  using dir = tempDir();
  const db = join(dir.path, "honeybee.db");
  {
    await using core = await startTestCore({ db });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    const lines = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ eventid: "t.e", n: i, filler: "x".repeat(200) }));
    c.send(lines);
    await c.ack(lines.length);
  }
  // Leaf pages of the events table in the middle of its history: read by a long listing, not
  // by start-up (which looks at the newest rows only).
  const raw = new Database(db, { readonly: true });
  const pageSize = (raw.query("PRAGMA page_size").get() as { page_size: number }).page_size;
  const leaves = (raw.query("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno").all() as { pageno: number }[]).map((r) => r.pageno);
  raw.close();
  expect(leaves.length).toBeGreaterThan(20);
  const fd = openSync(db, "r+");
  for (const page of leaves.slice(5, 15)) writeSync(fd, Buffer.alloc(pageSize, 0xa5), 0, pageSize, (page - 1) * pageSize);
  closeSync(fd);

  const lines: any[] = [];
  const logger = pino({ level: "info" }, new Writable({ write: (chunk, _e, cb) => (lines.push(JSON.parse(chunk.toString())), cb()) }));
  await using core = await startTestCore({ db }, logger);
  // Walk the pages until one reaches the damage.
  let res = await getJson(`${core.api}/api/v1/events?limit=1000`);
  while (res.status === 200 && res.body.next_cursor !== null) res = await getJson(`${core.api}/api/v1/events?limit=1000&cursor=${res.body.next_cursor}`);
  expect(res.status).toBe(500);
  expect(res.body.error.code).toBe("database_corrupt");
  expect(res.body.error.message).toContain("integrity_check");
  const logged = lines.find((l) => l.msg?.includes("PRAGMA integrity_check"));
  expect(logged?.msg).toContain(db);
  expect(logged?.level).toBe(50);
  // Core keeps answering what it can.
  expect((await getJson(`${core.api}/health`)).status).toBe(200);
});
