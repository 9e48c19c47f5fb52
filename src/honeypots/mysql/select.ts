/**
 * SELECT as far as attackers use it on a fresh server: expressions without a table, and one
 * table of the catalogue read with `*` or named columns, COUNT(*), simple WHERE tests
 * (`col = 'x'`, `col LIKE 'x%'`, joined with AND), LIMIT and UNION. Joins read their first table;
 * a WHERE it cannot follow returns the rows unfiltered, as a loose match would.
 */
import type { Table } from "./catalog.ts";
import { ColumnRef, evaluate, itemName, splitAlias, type SqlContext } from "./expr.ts";
import { errors, type ErrorOutcome, type Outcome, type Value } from "./outcome.ts";
import { type Column, TYPE } from "./packets.ts";
import { findKeyword, identifierPath, likeMatcher, splitTopLevel, stringLiteral } from "./sql-text.ts";

const CLAUSES = ["FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "PROCEDURE", "INTO", "FOR UPDATE", "FOR SHARE", "LOCK IN SHARE MODE", "WINDOW"];
const MODIFIERS = /^(?:(?:ALL|DISTINCT|DISTINCTROW|HIGH_PRIORITY|STRAIGHT_JOIN|SQL_SMALL_RESULT|SQL_BIG_RESULT|SQL_BUFFER_RESULT|SQL_NO_CACHE|SQL_CACHE|SQL_CALC_FOUND_ROWS)\s+)+/i;

/** The protocol type a column of this SQL type is sent as. */
export function columnType(sqlType: string): number {
  if (/^(tiny|small|medium|big)?int\b/i.test(sqlType)) return TYPE.LONGLONG;
  if (/^(datetime|timestamp)/i.test(sqlType)) return TYPE.DATETIME;
  return TYPE.VAR_STRING;
}

/** Splits a SELECT's text (after the keyword) into its clauses. */
function clauses(body: string): Map<string, string> {
  const found = CLAUSES.map((name) => ({ name, at: findKeyword(body, name) }))
    .filter((c) => c.at >= 0)
    .sort((a, b) => a.at - b.at);
  const out = new Map<string, string>();
  out.set("ITEMS", body.slice(0, found[0]?.at ?? body.length));
  for (const [i, c] of found.entries()) out.set(c.name, body.slice(c.at + c.name.length, found[i + 1]?.at ?? body.length).trim());
  return out;
}

type Filter = (row: Value[]) => boolean;

/** `col = lit AND col LIKE lit ...`; null when the condition is anything else. */
function whereFilter(where: string, columns: [string, string][]): Filter | ErrorOutcome | null {
  const tests: Filter[] = [];
  for (const part of where.split(/\s+and\s+/i)) {
    const m = /^\s*(`[^`]+`|[\w$.]+)\s*(=|!=|<>|\s+not\s+like\s+|\s+like\s+)\s*('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|-?\d+)\s*$/i.exec(part);
    if (!m) return null;
    const path = identifierPath(m[1]!);
    const name = path?.[path.length - 1];
    const index = columns.findIndex(([c]) => c.toLowerCase() === name?.toLowerCase());
    if (index < 0) return errors.unknownColumn(m[1]!.replace(/`/g, ""), "where clause");
    const op = m[2]!.trim().toLowerCase().replace(/\s+/g, " ");
    const literal = stringLiteral(m[3]!) ?? m[3]!;
    const like = likeMatcher(literal);
    const eq = (v: Value) => v !== null && v.toLowerCase() === literal.toLowerCase();
    tests.push((row) => {
      const v = row[index] ?? null;
      if (op === "=") return eq(v);
      if (op === "like") return v !== null && like(v);
      if (op === "not like") return v !== null && !like(v);
      return v !== null && !eq(v);
    });
  }
  return (row) => tests.every((t) => t(row));
}

function limit(text: string | undefined, rows: Value[][]): Value[][] {
  if (!text) return rows;
  const m = /^(\d+)(?:\s*,\s*(\d+)|\s+offset\s+(\d+))?/i.exec(text);
  if (!m) return rows;
  if (m[2] !== undefined) return rows.slice(Number(m[1]), Number(m[1]) + Number(m[2]));
  const offset = m[3] === undefined ? 0 : Number(m[3]);
  return rows.slice(offset, offset + Number(m[1]));
}

/** The table a FROM clause names first (joins and aliases aside), resolved against the catalogue. */
function fromTable(from: string, ctx: SqlContext): { db: string; name: string; table: Table } | ErrorOutcome | null {
  const first = splitTopLevel(from, ",")[0]!.trim();
  const joinAt = findKeyword(first, "JOIN");
  const ref = (joinAt >= 0 ? first.slice(0, joinAt) : first).trim().split(/\s+/)[0] ?? "";
  const path = identifierPath(ref);
  if (!path || path.length > 2) return errors.syntax(from);
  if (path.length === 1 && path[0]!.toLowerCase() === "dual") return null;
  const db = path.length === 2 ? path[0]! : ctx.session.database;
  const name = path[path.length - 1]!;
  if (db === null) return errors.noDatabase();
  const table = ctx.catalog.table(db, name);
  return table ? { db, name, table } : errors.noTable(db, name);
}

/** One SELECT (no UNION): its result set or MySQL's error. */
function selectOne(body: string, ctx: SqlContext): Outcome {
  const parts = clauses(body.replace(MODIFIERS, ""));
  const into = parts.get("INTO");
  if (into !== undefined) return /^(outfile|dumpfile)\b/i.test(into) ? errors.secureFilePriv() : { kind: "ok" };
  const items = splitTopLevel(parts.get("ITEMS")!, ",").map((i) => i.trim());
  if (items.some((i) => i === "")) return errors.syntax(parts.get("ITEMS")!);
  const from = parts.get("FROM");
  const source = from === undefined ? null : fromTable(from, ctx);
  if (source && "kind" in source) return source;
  const tableCols = source?.table.columns ?? [];
  let rows: Value[][] = source ? source.table.rows : [[]];
  const where = parts.get("WHERE");
  if (source && where) {
    const filter = whereFilter(where, tableCols);
    if (filter && typeof filter !== "function") return filter;
    if (filter) rows = rows.filter(filter);
  }

  const columns: Column[] = [];
  const cells: ((row: Value[]) => Value)[] = [];
  let aggregate = false;
  const schema = source ? { schema: source.db, table: source.name } : {};
  for (const item of items) {
    if (item === "*" || /\.\s*\*$/.test(item)) {
      if (!source) return errors.syntax(item);
      tableCols.forEach(([name, type], i) => {
        columns.push({ name, type: columnType(type), ...schema });
        cells.push((row) => row[i] ?? null);
      });
      continue;
    }
    const { expr, alias } = splitAlias(item);
    const name = alias ?? itemName(expr);
    if (/^count\s*\(/i.test(expr)) {
      aggregate = true;
      columns.push({ name, type: TYPE.LONGLONG });
      cells.push(() => String(rows.length));
      continue;
    }
    const v = evaluate(expr, ctx);
    if (v instanceof ColumnRef) {
      const column = v.path[v.path.length - 1]!;
      const index = tableCols.findIndex(([c]) => c.toLowerCase() === column.toLowerCase());
      if (index < 0) return errors.unknownColumn(v.path.join("."));
      columns.push({ name, type: columnType(tableCols[index]![1]), ...schema });
      cells.push((row) => row[index] ?? null);
    } else if ("kind" in v) return v;
    else {
      columns.push({ name, type: v.numeric ? TYPE.LONGLONG : TYPE.VAR_STRING });
      cells.push(() => v.value);
    }
  }
  const picked = aggregate ? [rows[0] ?? []] : rows;
  return { kind: "rows", columns, rows: limit(parts.get("LIMIT"), picked.map((row) => cells.map((cell) => cell(row)))) };
}

/** A SELECT statement's text after the SELECT keyword, UNIONs included. */
export function select(body: string, ctx: SqlContext): Outcome {
  const branches: string[] = [];
  let rest = body;
  for (let at = findKeyword(rest, "UNION"); at >= 0; at = findKeyword(rest, "UNION")) {
    branches.push(rest.slice(0, at));
    rest = rest.slice(at + 5).replace(/^\s*(all|distinct)\b/i, "").replace(/^\s*select\b/i, "");
    if (branches.length > 64) return errors.syntax(rest);
  }
  branches.push(rest);
  const results: Extract<Outcome, { kind: "rows" }>[] = [];
  for (const branch of branches) {
    const one = selectOne(branch, ctx);
    if (one.kind !== "rows") return one;
    if (results.length > 0 && results[0]!.columns.length !== one.columns.length) return errors.columnCount();
    results.push(one);
  }
  return { kind: "rows", columns: results[0]!.columns, rows: results.flatMap((r) => r.rows) };
}
