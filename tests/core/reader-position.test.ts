import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { openDatabase } from "../../src/db";
import { OutputStore } from "../../src/db/output-store";
import { tempDir } from "../helpers";

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
