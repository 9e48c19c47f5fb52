/**
 * Statements written by Drizzle and run by bun:sqlite directly, for the event writer's hot
 * statements: Drizzle fills each placeholder through a few `is()` checks and builds an array
 * per run (measured: ~0.3 µs per event on the 32-row event INSERT, ~1 µs per new session row
 * of 17 values), while these columns store what they are given.
 */
import type { SQLQueryBindings } from "bun:sqlite";
import { sql } from "drizzle-orm";
import type { Db } from "./index";

/** The placeholder at position `i` of a positional statement. */
export const slot = (i: number) => sql.placeholder(String(i));

/**
 * A statement whose placeholders are named by position ("0", "1", ...). Returns a runner taking
 * the values by placeholder name, as one array (reused by the caller). Values in placeholder
 * order are bound as the array itself: spreading 500 arguments per statement cost more.
 */
export function positional(db: Db, query: { toSQL(): { sql: string; params: unknown[] } }): (values: unknown[]) => void {
  const { sql: text, params } = query.toSQL();
  const order = params.map((p) => Number((p as { name: string }).name));
  const stmt = db.$client.prepare(text);
  if (order.every((n, i) => n === i) && order.length > 0) {
    return (values) => {
      stmt.run(values as SQLQueryBindings[] as unknown as SQLQueryBindings);
    };
  }
  const bound: SQLQueryBindings[] = new Array(order.length);
  return (values) => {
    for (let i = 0; i < order.length; i++) bound[i] = values[order[i]!] as SQLQueryBindings;
    stmt.run(bound as unknown as SQLQueryBindings);
  };
}

/**
 * Writes rows through a statement of `rows` rows at a time (`statement(n)` builds one of n
 * rows with positional placeholders, `columns` per row), the rest one row at a time: for bulk
 * writes where a statement per row costs the call and Drizzle's binding on every row.
 */
export function rowWriter(db: Db, statement: (rows: number) => { toSQL(): { sql: string; params: unknown[] } }, columns: number, rows = 32) {
  const many = positional(db, statement(rows));
  const one = positional(db, statement(1));
  const values: unknown[] = new Array(rows * columns);
  /** Writes every row (its values in column order), within the caller's transaction. */
  return (all: Iterable<readonly unknown[]>): void => {
    let n = 0;
    for (const row of all) {
      for (let i = 0; i < columns; i++) values[n * columns + i] = row[i];
      if (++n === rows) {
        many(values);
        n = 0;
      }
    }
    for (let r = 0; r < n; r++) one(values.slice(r * columns, (r + 1) * columns));
  };
}
