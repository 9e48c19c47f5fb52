import { expect, test } from "bun:test";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pg from "../../src/db/pg/schema";
import * as sqlite from "../../src/db/schema";

/** Tables only one backend has, and why. */
const ONLY = {
  // A cluster's writers key each stored event by its sender and position (idempotency across
  // writers); SQLite's one writer keeps the senders' positions in event_meta instead.
  // Bytes of artifacts: SQLite keeps them in files beside the database, PostgreSQL in the
  // database, where every instance of a cluster reads them.
  postgres: ["event_keys", "artifact_chunks"],
  sqlite: [] as string[],
};

const tables = <T>(mod: Record<string, unknown>, is: (v: unknown) => v is T, cfg: (t: T) => { name: string; columns: { name: string }[] }) =>
  new Map(
    Object.values(mod)
      .filter(is)
      .map((t) => {
        const c = cfg(t);
        return [c.name, c.columns.map((col) => col.name).sort()] as const;
      }),
  );

test("the SQLite and PostgreSQL schemas describe the same tables, with the same columns", () => {
  const lite = tables(sqlite, (v): v is SQLiteTable => v instanceof SQLiteTable, sqliteConfig);
  const post = tables(pg, (v): v is PgTable => v instanceof PgTable, pgConfig);
  expect(lite.size).toBeGreaterThan(15);
  for (const name of ONLY.postgres) post.delete(name);
  for (const name of ONLY.sqlite) lite.delete(name);
  expect(Object.fromEntries([...post].sort())).toEqual(Object.fromEntries([...lite].sort()));
});
