/**
 * Opens the SQLite database, tunes it for a write-heavy event stream, and applies the
 * committed migrations from `drizzle/`.
 */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import * as schema from "./schema";

export const MIGRATIONS_DIR = join(import.meta.dir, "..", "..", "drizzle");

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

export function openDatabase(path: string): Db {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path, { create: true, strict: true });
  // Only takes effect when the file is new. The event writer appends ~1 MB per batch, and
  // SQLite writes the WAL and checkpoints a page per system call: 16 KiB pages make that a
  // quarter of the calls (measured: 0.3 µs less per event than 4 KiB pages).
  sqlite.exec("PRAGMA page_size = 16384");
  // WAL lets REST read while the writer commits; NORMAL is durable across process crashes
  // (only an OS crash can lose the last transactions) and Bun's default for WAL is FULL,
  // which fsyncs every commit.
  sqlite.exec("PRAGMA journal_mode = WAL");
  sqlite.exec("PRAGMA synchronous = NORMAL");
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA cache_size = -65536");
  sqlite.exec("PRAGMA temp_store = MEMORY");
  const db = drizzle({ client: sqlite, schema }) as Db;
  migrate(db, { migrationsFolder: MIGRATIONS_DIR });
  return db;
}
