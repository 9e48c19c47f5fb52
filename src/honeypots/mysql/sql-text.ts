/**
 * The little of SQL's lexical rules the fake server needs to take a query apart: comments,
 * quoted strings and identifiers, statement and list separators. Everything here only reads the
 * attacker's text; nothing of it is ever executed.
 */

/** Longest statement text looked at; the rest of a huge query only goes into the event. */
export const MAX_SQL_CHARS = 65536;

/**
 * Comments removed as mysqld skips them, except `/*!NNNNN ... *\/`, which MySQL runs (mysqldump
 * and many tools wrap SET statements in them): its body is kept. Quoted text is left as it is.
 */
export function stripComments(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === "`") {
      const end = quotedEnd(sql, i);
      out += sql.slice(i, end);
      i = end;
    } else if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      const end = close === -1 ? sql.length : close;
      if (sql[i + 2] === "!") out += ` ${sql.slice(i + 3, end).replace(/^\d{5,6}/, "")} `;
      else out += " ";
      i = end + 2;
    } else if ((c === "-" && sql[i + 1] === "-" && /[\s]/.test(sql[i + 2] ?? " ")) || c === "#") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Index just past the quoted run starting at `start` (backslash escapes and doubled quotes). */
function quotedEnd(sql: string, start: number): number {
  const q = sql[start]!;
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === "\\" && q !== "`") i += 2;
    else if (sql[i] === q) {
      if (sql[i + 1] === q) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/** Whether `s` is one parenthesised whole: "(a)" and "((a))", not "(a) + (b)". */
export function enclosed(s: string): boolean {
  if (!s.startsWith("(") || !s.endsWith(")")) return false;
  let depth = 0;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i = quotedEnd(s, i);
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return i === s.length - 1;
    i++;
  }
  return false;
}

/** Splits on `sep` where it is outside quotes and parentheses. */
export function splitTopLevel(sql: string, sep: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i = quotedEnd(sql, i);
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (c === sep && depth === 0) {
      parts.push(sql.slice(from, i));
      from = i + 1;
    }
    i++;
  }
  parts.push(sql.slice(from));
  return parts;
}

/** The statements of a query, comments removed, blank ones dropped. */
export function statements(sql: string): string[] {
  return splitTopLevel(stripComments(sql.slice(0, MAX_SQL_CHARS)), ";")
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Where a keyword occurs at the top level (outside quotes and parentheses, as a whole word), or
 * -1. `keyword` is matched case-insensitively and may hold spaces ("ORDER BY").
 */
export function findKeyword(sql: string, keyword: string, from = 0): number {
  const re = new RegExp(`^${keyword.replace(/ /g, "\\s+")}(?![\\w$])`, "i");
  let depth = 0;
  let i = from;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"' || c === "`") {
      i = quotedEnd(sql, i);
      continue;
    }
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && (i === 0 || !/[\w$@.]/.test(sql[i - 1]!)) && re.test(sql.slice(i, i + keyword.length + 16))) return i;
    i++;
  }
  return -1;
}

/** A quoted string literal's value ('it''s', "a\"b"), or null when `token` is not one. */
export function stringLiteral(token: string): string | null {
  const t = token.trim();
  const q = t[0];
  if ((q !== "'" && q !== '"') || t.length < 2 || t[t.length - 1] !== q || quotedEnd(t, 0) !== t.length) return null;
  return t
    .slice(1, -1)
    .replace(new RegExp(`${q}${q}`, "g"), q)
    .replace(/\\(.)/g, (_, ch: string) => ({ n: "\n", t: "\t", r: "\r", "0": "\0" })[ch] ?? ch);
}

/** An identifier without its backquotes; `db`.`t` becomes ["db", "t"]. */
export function identifierPath(token: string): string[] | null {
  const parts = splitTopLevel(token.trim(), ".").map((p) => p.trim());
  const names: string[] = [];
  for (const p of parts) {
    if (/^`(?:[^`]|``)+`$/.test(p)) names.push(p.slice(1, -1).replace(/``/g, "`"));
    else if (/^[A-Za-z0-9_$]+$/.test(p)) names.push(p);
    else return null;
  }
  return names.length > 0 ? names : null;
}

/** MySQL's LIKE: `%` any run, `_` one character, backslash escapes; case-insensitive as under its default collation. */
export function likeMatcher(pattern: string): (value: string) => boolean {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else if (c === "%") re += "[\\s\\S]*";
    else if (c === "_") re += "[\\s\\S]";
    else re += escapeRe(c);
  }
  const compiled = new RegExp(`^${re}$`, "i");
  return (value) => compiled.test(value);
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/** The text of a syntax error's "near '...'": what follows the error, cut where mysqld cuts it. */
export function near(rest: string): string {
  return rest.trim().slice(0, 80);
}
