/**
 * The PostgreSQL writers' array parameters (src/db/pg/arrays.ts), built as array literals
 * rather than by Bun's sql.array: what PostgreSQL reads back from them, on the machine's server,
 * is exactly what was given (nulls, quotes, backslashes, the literal's own delimiters, 64-bit
 * keys, typed arrays), and the same as from sql.array.
 */
import { afterAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { ints, texts } from "../../src/db/pg/arrays";
import { PG_ADMIN_URL } from "../helpers/postgres";

const sql = new SQL(PG_ADMIN_URL, { max: 1 });
afterAll(() => sql.close());

const HARD = ['a"b', "c\\d", "\\", '"', "", "x,y", "{z}", " spaced ", "NULL", "ünïcode ✓", 'both \\" here'];

test("texts: every string comes back as it was, nulls as nulls, and as sql.array sends them", async () => {
  for (const values of [HARD, ["plain", "strings", "only"], [null, "a", undefined, 'q"'], [], ["one"]]) {
    const want = values.map((v) => v ?? null);
    const rows: { v: string | null }[] = await sql`select v from unnest(${texts(values)}::text[]) with ordinality as u(v, i) order by i`;
    expect(rows.map((r) => r.v)).toEqual(want);
    const viaBun: { v: string | null }[] = await sql`select v from unnest(${sql.array(want, "TEXT")}::text[]) with ordinality as u(v, i) order by i`;
    expect(viaBun.map((r) => r.v)).toEqual(want);
  }
});

test("ints: numbers, nulls, 64-bit keys and typed arrays come back as they were", async () => {
  const back = async (lit: string, type: "int4" | "int8") =>
    ((await sql.unsafe(`select v::text from unnest($1::${type}[]) with ordinality as u(v, i) order by i`, [lit])) as { v: string | null }[]).map((r) => r.v);
  expect(await back(ints([1, -2, 0, 2147483647]), "int4")).toEqual(["1", "-2", "0", "2147483647"]);
  expect(await back(ints([1, null, 3, undefined]), "int4")).toEqual(["1", null, "3", null]);
  expect(await back(ints([]), "int4")).toEqual([]);
  const keys = new BigInt64Array([0n, -1n, 9223372036854775807n, -9223372036854775808n, 9007199254740993n]);
  expect(await back(ints(keys), "int8")).toEqual([...keys].map(String));
  // Times in ms as the batches hold them (Float64Array), past 2^32.
  const ts = new Float64Array([1795824000000, 1, 4102444800000]);
  expect(await back(ints(ts), "int8")).toEqual(["1795824000000", "1", "4102444800000"]);
  expect(await back(ints(new Int32Array([5, -6])), "int4")).toEqual(["5", "-6"]);
});
