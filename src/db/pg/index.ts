/**
 * Opens a PostgreSQL database (`db: postgres://user@host:port/name`) through Bun's own client
 * (Bun.sql: no dependency, and it speaks COPY) and applies the migrations of drizzle/pg/.
 */
import { SQL } from "bun";
import { drizzle, type BunSQLDatabase } from "drizzle-orm/bun-sql";
import { migrate } from "drizzle-orm/bun-sql/migrator";
import { join } from "node:path";
import { DatabaseOpenError } from "../index";
import * as schema from "./schema";

export const PG_MIGRATIONS_DIR = join(import.meta.dir, "..", "..", "..", "drizzle", "pg");

export type PgDb = BunSQLDatabase<typeof schema> & { $client: SQL };

/** A `db` setting that names a PostgreSQL database rather than an SQLite file. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/** The URL without its password, for logs and messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "postgres://(unparsable URL)";
  }
}

/** A client of its own: `max` connections, bigint columns as JS numbers where drizzle maps them. */
export function pgClient(url: string, max: number): SQL {
  return new SQL(url, { max, idleTimeout: 0, connectionTimeout: 10 });
}

export function pgDrizzle(client: SQL): PgDb {
  return drizzle({ client, schema }) as PgDb;
}

/**
 * Connects and migrates; a database that cannot be reached is a start-up problem the operator
 * fixes (`honeybee: ...`, exit 1), like an SQLite file that cannot be opened.
 */
export async function openPgDatabase(url: string, max = 8): Promise<PgDb> {
  const client = pgClient(url, max);
  const db = pgDrizzle(client);
  try {
    await client`select 1`;
    await migrateLocked(db, url);
  } catch (e) {
    await client.close().catch(() => {});
    const err = e as Error & { code?: string; errno?: string };
    throw new DatabaseOpenError(`cannot use the PostgreSQL database ${redactUrl(url)}: ${err.message}${err.errno ? ` (${err.errno})` : ""}; check that the server runs, the database exists and the user may create tables in it`);
  }
  return db;
}

const MIGRATION_LOCK = 0x68627065; // "hbpe"

/** Several instances starting together would race on the migrations table: one at a time. */
async function migrateLocked(db: PgDb, url: string): Promise<void> {
  // A connection of its own holds the lock: the pool may have a single connection.
  const lock = pgClient(url, 1);
  try {
    await lock`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migrate(db, { migrationsFolder: PG_MIGRATIONS_DIR });
  } finally {
    await lock.close();
  }
}
