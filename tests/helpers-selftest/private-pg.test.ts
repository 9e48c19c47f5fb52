/**
 * The private PostgreSQL server that scale-out tests stop and kill: it keeps its data across a
 * stop and a crash, refuses connections while down, and leaves nothing behind.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { SQL } from "bun";
import { scratchDatabaseOn } from "../helpers/postgres";
import { startPrivatePg } from "../helpers/private-pg";

const connect = (url: string) => new SQL(url, { max: 1, idleTimeout: 0, connectionTimeout: 5 });

test("a private server keeps its rows across a stop, refuses connections while down, and destroy removes it", async () => {
  const pg = await startPrivatePg();
  try {
    expect(pg.url).toBe(`postgres://postgres@127.0.0.1:${pg.port}/postgres`);
    expect(pg.port).not.toBe(5432);
    const db = await scratchDatabaseOn(pg.url, "selftest");
    let sql = connect(db.url);
    await sql`create table t (id int primary key, note text)`;
    await sql`insert into t values (1, 'before the stop')`;
    await sql.close();

    await pg.stop();
    sql = connect(db.url);
    const down = await sql`select 1`.then(() => null, (e: Error) => e);
    await sql.close().catch(() => {});
    expect(down).toBeInstanceOf(Error);
    expect(`${(down as any).code} ${down!.message}`).toMatch(/ECONNREFUSED|connection refused|Connection closed|ERR_POSTGRES_CONNECTION/i);

    await pg.start();
    sql = connect(db.url);
    expect(await sql`select id, note from t`).toEqual([{ id: 1, note: "before the stop" }]);
    await sql.close();
    await db.drop();
    expect(await connect(pg.url)`select count(*)::int as n from pg_database where datname = ${db.name}`).toEqual([{ n: 0 }]);
  } finally {
    await pg.destroy();
  }
  expect(existsSync(pg.dir)).toBe(false);
});

test("after a kill (a crash) the server recovers its committed rows on the same port", async () => {
  await using pg = await startPrivatePg();
  let sql = connect(pg.url);
  await sql`create table t (id int)`;
  await sql`insert into t select generate_series(1, 1000)`;
  await pg.kill();
  const down = await sql`select 1`.then(() => null, (e: Error) => e);
  await sql.close().catch(() => {});
  expect(down).toBeInstanceOf(Error);
  await pg.start();
  sql = connect(pg.url);
  expect(await sql`select count(*)::int as n from t`).toEqual([{ n: 1000 }]);
  await sql.close();
  expect(pg.logTail()).toMatch(/database system was interrupted|not properly shut down|redo/);
});
