/**
 * Opens the SQLite database, tunes it for a write-heavy event stream, and applies the
 * committed migrations from `drizzle/`.
 */
import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate } from "drizzle-orm/bun-sqlite/migrator";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../config";
import * as schema from "./schema";

export const MIGRATIONS_DIR = join(import.meta.dir, "..", "..", "drizzle");

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/**
 * The database file cannot be used: one line naming the file and what to do. A start-up
 * problem the operator fixes, so it is reported like a bad setting (`honeybee: ...`, exit 1).
 */
export class DatabaseOpenError extends ConfigError {
  override name = "DatabaseOpenError";
}

/** What to do about an SQLite error at open, by its code. */
function advice(code: string | undefined, path: string): string {
  switch (code) {
    case "SQLITE_NOTADB":
    case "SQLITE_CORRUPT":
      return `it is not an SQLite database or it is damaged. Restore it from a backup, or move it away to start with an empty one (\`sqlite3 ${path} 'PRAGMA integrity_check'\` says what is wrong)`;
    case "SQLITE_CANTOPEN":
      return "check that it is a file (not a folder) that Core's user can read and write, in a folder it can write (SQLite keeps the -wal and -shm files beside it)";
    case "SQLITE_READONLY":
    case "SQLITE_PERM":
    case "SQLITE_AUTH":
      return "Core must be able to write it: check its permissions and that the file system is not mounted read-only";
    case "SQLITE_READONLY_DIRECTORY":
      return "Core must be able to write the folder it is in (SQLite keeps the -wal and -shm files beside it): check the folder's permissions, or give another path with --db";
    case "SQLITE_FULL":
      return "the disk is full: free some space";
    default:
      return "check the file, or give another path with --db";
  }
}

export function openDatabase(path: string): Db {
  try {
    return open(path);
  } catch (e) {
    const err = e as Error & { code?: string };
    // Only SQLite's own errors are about the file; anything else is a bug and keeps its stack.
    if (typeof err.code !== "string" || !err.code.startsWith("SQLITE_")) throw e;
    const where = path === ":memory:" ? path : resolve(path);
    throw new DatabaseOpenError(`cannot open the database ${where}: ${err.message} (${err.code}); ${advice(err.code, where)}`);
  }
}

/** The folder of the file, made when missing; one line when that fails (a read-only file system). */
function makeFolder(path: string): void {
  const folder = dirname(resolve(path));
  try {
    mkdirSync(folder, { recursive: true });
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (typeof err.code !== "string" || !err.syscall) throw e;
    const what = err.message.replace(/^[A-Z]+: /, "").replace(/, \w+ '.*'$/, "");
    throw new DatabaseOpenError(`cannot create the folder ${folder} for the database ${resolve(path)}: ${what} (${err.code}); give Core a folder it can write, or another path with --db`);
  }
}

function open(path: string): Db {
  if (path !== ":memory:") makeFolder(path);
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
  // A file its user may read but not write, SQLite opens read-only without an error, and the
  // first write failed later with a stack. Writing the header's user_version (unused, so
  // written back unchanged) makes that an error here, where it is reported with the path.
  const { user_version } = sqlite.query<{ user_version: number }, []>("PRAGMA user_version").get()!;
  sqlite.exec(`PRAGMA user_version = ${user_version}`);
  const db = drizzle({ client: sqlite, schema }) as Db;
  migrate(db, { migrationsFolder: MIGRATIONS_DIR });
  return db;
}
