/**
 * Values of the expressions clients and bots put in a SELECT without tables: system variables,
 * VERSION(), USER(), DATABASE(), literals, a few string functions. What the fake server does not
 * know comes out NULL, as from a function that found nothing; nothing waits (SLEEP answers at
 * once) and nothing touches a file (LOAD_FILE is NULL, as under secure_file_priv).
 */
import { createHash } from "node:crypto";
import type { Catalog } from "./catalog.ts";
import { errors, type ErrorOutcome, type Value } from "./outcome.ts";
import { enclosed, identifierPath, splitTopLevel, stringLiteral } from "./sql-text.ts";

export interface SqlSession {
  user: string;
  /** The client's host as USER() shows it. */
  host: string;
  database: string | null;
  connectionId: number;
}

export interface SqlContext {
  catalog: Catalog;
  session: SqlSession;
  now: Date;
}

export interface Evaluated {
  value: Value;
  numeric: boolean;
}

const str = (value: Value): Evaluated => ({ value, numeric: false });
const num = (value: string): Evaluated => ({ value, numeric: true });

/** MySQL's DATETIME text, in UTC (system_time_zone). */
export function datetime(d: Date): string {
  return d.toISOString().slice(0, 19).replace("T", " ");
}

/** An identifier an expression names, not a value: a column for the caller to look up. */
export class ColumnRef {
  constructor(readonly path: string[]) {}
}

const NULLARY: Record<string, (ctx: SqlContext) => Evaluated> = {
  version: (ctx) => str(ctx.catalog.info.version),
  database: (ctx) => str(ctx.session.database),
  schema: (ctx) => str(ctx.session.database),
  user: (ctx) => str(`${ctx.session.user}@${ctx.session.host}`),
  session_user: (ctx) => str(`${ctx.session.user}@${ctx.session.host}`),
  system_user: (ctx) => str(`${ctx.session.user}@${ctx.session.host}`),
  current_user: (ctx) => str(`${ctx.session.user}@%`),
  connection_id: (ctx) => num(String(ctx.session.connectionId)),
  now: (ctx) => str(datetime(ctx.now)),
  current_timestamp: (ctx) => str(datetime(ctx.now)),
  sysdate: (ctx) => str(datetime(ctx.now)),
  localtime: (ctx) => str(datetime(ctx.now)),
  curdate: (ctx) => str(datetime(ctx.now).slice(0, 10)),
  current_date: (ctx) => str(datetime(ctx.now).slice(0, 10)),
  curtime: (ctx) => str(datetime(ctx.now).slice(11)),
  current_time: (ctx) => str(datetime(ctx.now).slice(11)),
  unix_timestamp: (ctx) => num(String(Math.floor(ctx.now.getTime() / 1000))),
  uuid: () => str(crypto.randomUUID()),
  last_insert_id: () => num("0"),
  found_rows: () => num("0"),
  row_count: () => num("-1"),
  pi: () => num("3.141593"),
};

/** Keywords that are values without parentheses. */
const BARE = new Set(["current_user", "current_timestamp", "current_date", "current_time", "localtime"]);

function hash(name: string, input: string): string {
  return createHash(name).update(input, "utf8").digest("hex");
}

/** Functions of their arguments' values; NULL in gives NULL out where MySQL does so. */
const FUNCTIONS: Record<string, (args: Value[]) => Evaluated> = {
  concat: (a) => str(a.some((v) => v === null) ? null : a.join("")),
  concat_ws: ([sep, ...rest]) => str(sep === null || sep === undefined ? null : rest.filter((v) => v !== null).join(sep)),
  lower: ([v]) => str(v == null ? null : v.toLowerCase()),
  upper: ([v]) => str(v == null ? null : v.toUpperCase()),
  length: ([v]) => (v == null ? str(null) : num(String(Buffer.byteLength(v)))),
  char_length: ([v]) => (v == null ? str(null) : num(String([...v].length))),
  md5: ([v]) => str(v == null ? null : hash("md5", v)),
  sha1: ([v]) => str(v == null ? null : hash("sha1", v)),
  sha: ([v]) => str(v == null ? null : hash("sha1", v)),
  hex: ([v]) => str(v == null ? null : Buffer.from(v, "utf8").toString("hex").toUpperCase()),
  ifnull: ([a, b]) => str(a ?? b ?? null),
  coalesce: (a) => str(a.find((v) => v !== null) ?? null),
  // Time-based probes get their answer at once: the honeypot never waits on an attacker's behalf.
  sleep: () => num("0"),
  benchmark: () => num("0"),
  load_file: () => str(null),
};

/**
 * The value of one expression, a column reference for the caller to resolve, or MySQL's error
 * (an unknown system variable).
 */
export function evaluate(expr: string, ctx: SqlContext, depth = 0): Evaluated | ColumnRef | ErrorOutcome {
  let e = expr.trim();
  while (enclosed(e) && depth < 32) {
    e = e.slice(1, -1).trim();
    depth++;
  }
  if (/^null$/i.test(e)) return str(null);
  if (/^[-+]?\d+(\.\d+)?$/.test(e)) return num(e.replace(/^\+/, ""));
  if (/^(true|false)$/i.test(e)) return num(/^true$/i.test(e) ? "1" : "0");
  const literal = stringLiteral(e.replace(/^(?:_[a-z0-9]+|n)(?=')/i, ""));
  if (literal !== null) return str(literal);
  const hex = /^0x([0-9a-f]+)$/i.exec(e) ?? /^x'([0-9a-f]*)'$/i.exec(e);
  if (hex) return str(Buffer.from(hex[1]!.length % 2 ? `0${hex[1]}` : hex[1]!, "hex").toString("utf8"));
  const sysvar = /^@@(?:(global|session|local)\.)?`?([a-z0-9_]+)`?$/i.exec(e);
  if (sysvar) {
    const value = ctx.catalog.variables.get(sysvar[2]!.toLowerCase());
    return value === undefined ? errors.unknownVariable(sysvar[2]!) : str(value);
  }
  if (/^@`?[\w$.]+`?$/.test(e)) return str(null);
  const arithmetic = /^(-?\d+)\s*([-+*])\s*(-?\d+)$/.exec(e);
  if (arithmetic) {
    const [a, b] = [BigInt(arithmetic[1]!), BigInt(arithmetic[3]!)];
    return num(String(arithmetic[2] === "+" ? a + b : arithmetic[2] === "-" ? a - b : a * b));
  }
  const call = /^([a-z_][a-z0-9_]*)\s*\(([\s\S]*)\)$/i.exec(e);
  if (call) {
    const name = call[1]!.toLowerCase();
    const argText = call[2]!.trim();
    if (NULLARY[name] && argText === "") return NULLARY[name](ctx);
    const fn = FUNCTIONS[name];
    if (!fn || depth >= 32) return str(null);
    const args: Value[] = [];
    for (const a of argText === "" ? [] : splitTopLevel(argText, ",")) {
      const v = evaluate(a, ctx, depth + 1);
      if (v instanceof ColumnRef) return str(null);
      if ("kind" in v) return v;
      args.push(v.value);
    }
    return fn(args);
  }
  if (BARE.has(e.toLowerCase())) return NULLARY[e.toLowerCase()]!(ctx);
  const path = identifierPath(e);
  if (path) return new ColumnRef(path);
  return str(null);
}

/** The name a client shows for a select item: its alias, a string literal's text, or the expression as written. */
export function itemName(expr: string): string {
  const literal = stringLiteral(expr);
  return (literal ?? expr.trim()).slice(0, 256);
}

/** The name token at the end of `t` (a word, or a quoted name) and what comes before it. */
function trailingName(t: string): { head: string; raw: string } | null {
  const last = t[t.length - 1];
  let start = t.length;
  if (last === "`" || last === "'" || last === '"') start = t.lastIndexOf(last, t.length - 2);
  else {
    while (start > 0 && /[\w$]/.test(t[start - 1]!)) start--;
    if (!/[A-Za-z_]/.test(t[start] ?? "")) return null;
  }
  if (start <= 0 || !/\s/.test(t[start - 1]!)) return null;
  return { head: t.slice(0, start).trimEnd(), raw: t.slice(start) };
}

/**
 * Splits "expr AS alias" (AS may be left out after a whole operand). Scanned from the end by hand:
 * a regular expression with a lazy head backtracks quadratically on a long item.
 */
export function splitAlias(item: string): { expr: string; alias: string | null } {
  const t = item.trim();
  const found = trailingName(t);
  if (!found || found.head === "") return { expr: t, alias: null };
  let head = found.head;
  const explicit = /^\sas$/i.test(head.slice(-3)) || /^as$/i.test(head);
  if (explicit) head = head.slice(0, -2).trimEnd();
  // Without AS, only after a whole operand (a call, a literal, a name): "1 + x" is no alias.
  const operand = ")'\"`".includes(head[head.length - 1] ?? "") || /^@{0,2}[\w.$`]+$/.test(head);
  if (head === "" || (!explicit && !operand)) return { expr: t, alias: null };
  const raw = found.raw;
  const alias = raw.startsWith("`") ? raw.slice(1, -1).replace(/``/g, "`") : (stringLiteral(raw) ?? raw);
  return { expr: head, alias };
}
