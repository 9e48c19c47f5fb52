import { Database } from "bun:sqlite";
import { SQL } from "bun";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/db";
import { OutputStore } from "../../src/db/output-store";
import { openStores, type Stores } from "../../src/db/stores";
import { tempDir } from "../helpers";
import { testDatabase } from "../helpers/postgres";

test("a reader's position write does not wait while another connection holds the write lock, and succeeds once it is free", () => {
  using dir = tempDir();
  const path = join(dir.path, "core.db");
  const db = openDatabase(path);
  const store = new OutputStore(db);
  store.setPosition("rules", 5);
  // A second connection in a write transaction, as the event writer's thread is under load.
  const writer = new Database(path);
  writer.exec("BEGIN IMMEDIATE");
  try {
    expect(store.trySetPosition("rules", 9)).toBe(false);
    expect(store.position("rules")).toBe(5);
  } finally {
    writer.exec("COMMIT");
    writer.close();
  }
  expect(store.trySetPosition("rules", 9)).toBe(true);
  expect(store.position("rules")).toBe(9);
  // The connection's own busy timeout is what it was: other writes on it still wait.
  expect((db.$client.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(5000);
  db.$client.close();
});

test("on PostgreSQL a reader's lease is one instance's at a time, and passes on when it is let go or its holder's connection closes", async () => {
  const db = await testDatabase();
  const a = await openStores(db.url);
  let b: Stores | null = await openStores(db.url);
  try {
    expect([await a.outputs.leases.take("rules"), await a.outputs.leases.take("rules"), await b.outputs.leases.take("rules"), await b.outputs.leases.take("output:siem")]).toEqual([true, true, false, true]);
    // Taken twice by its holder, it is still let go by one release.
    await a.outputs.leases.release("rules");
    expect([await b.outputs.leases.take("rules"), await a.outputs.leases.take("rules"), await a.outputs.leases.take("output:siem")]).toEqual([true, false, false]);
    await b.outputs.savePosition("rules", 42, false);
    expect(await a.outputs.position("rules")).toBe(42);
    await b.close();
    b = null;
    expect([await a.outputs.leases.take("rules"), await a.outputs.leases.take("output:siem")]).toEqual([true, true]);
    // The holder's connection is lost: its locks go with it, another takes them, and the holder,
    // connected again, finds it holds nothing.
    const admin = new SQL(db.url, { max: 1 });
    try {
      await admin`select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and granted`;
    } finally {
      await admin.close();
    }
    b = await openStores(db.url);
    expect(await b.outputs.leases.take("rules")).toBe(true);
    expect([await Promise.resolve(a.outputs.leases.take("rules")).catch(() => false), await a.outputs.leases.take("rules")]).toEqual([false, false]);
  } finally {
    await b?.close();
    await a.close();
    await db.drop();
  }
});
