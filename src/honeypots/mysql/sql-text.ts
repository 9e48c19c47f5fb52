/**
 * The little of SQL's lexical rules the fake server needs to take a query apart: comments,
 * quoted strings and identifiers, statement and list separators. Everything here only reads the
 * attacker's text; nothing of it is ever executed.
 */

/** Longest statement text looked at; the rest of a huge query only goes into the event. */
export const MAX_SQL_CHARS = 65536;

const QUOTE = 39; // '
const DQUOTE = 34; // "
const BACKTICK = 96; // `
const BACKSLASH = 92;
const OPEN = 40; // (
const CLOSE = 41; // )

const isQuote = (c: number) => c === QUOTE || c === DQUOTE || c === BACKTICK;
/** Letters, digits, `_`, `$`, `@`, `.`: what continues a name or a variable. */
const isWordChar = (c: number) => (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || c === 95 || c === 36 || c === 64 || c === 46 || c > 127;

// The scanners below index with charCodeAt and copy whole runs: attackers send queries of up to
// max_packet, and a character-at-a-time string walk costs several times as much.

/**
 * Comments removed as mysqld skips them, except `/*!NNNNN ... *\/`, which MySQL runs (mysqldump
 * and many tools wrap SET statements in them): its body is kept. Quoted text is left as it is.
 */
export function stripComments(sql: string): string {
  const out: string[] = [];
  let from = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (isQuote(c)) {
      i = quotedEnd(sql, i);
    } else if (c === 47 && sql.charCodeAt(i + 1) === 42) {
      out.push(sql.slice(from, i));
      const close = sql.indexOf("*/", i + 2);
      const end = close === -1 ? sql.length : close;
      out.push(sql.charCodeAt(i + 2) === 33 ? ` ${sql.slice(i + 3, end).replace(/^\d{5,6}/, "")} ` : " ");
      i = from = end + 2;
    } else if ((c === 45 && sql.charCodeAt(i + 1) === 45 && /\s/.test(sql[i + 2] ?? " ")) || c === 35) {
      out.push(sql.slice(from, i));
      const nl = sql.indexOf("\n", i);
      i = from = nl === -1 ? sql.length : nl;
    } else i++;
  }
  out.push(sql.slice(from));
  return out.join("");
}

/** Index just past the quoted run starting at `start` (backslash escapes and doubled quotes). */
function quotedEnd(sql: string, start: number): number {
  const q = sql.charCodeAt(start);
  let i = start + 1;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (c === BACKSLASH && q !== BACKTICK) i += 2;
    else if (c === q) {
      if (sql.charCodeAt(i + 1) === q) i += 2;
      else return i + 1;
    } else i++;
  }
  return sql.length;
}

/**
 * Calls `visit` with each position outside quotes and its parenthesis depth (before the
 * character's own effect), until `visit` returns true; returns that position, or -1.
 */
function walk(sql: string, from: number, visit: (i: number, c: number, depth: number) => boolean): number {
  let depth = 0;
  let i = from;
  while (i < sql.length) {
    const c = sql.charCodeAt(i);
    if (isQuote(c)) {
      i = quotedEnd(sql, i);
      continue;
    }
    if (visit(i, c, depth)) return i;
    if (c === OPEN) depth++;
    else if (c === CLOSE && depth > 0) depth--;
    i++;
  }
  return -1;
}

/** Whether `s` is one parenthesised whole: "(a)" and "((a))", not "(a) + (b)". */
export function enclosed(s: string): boolean {
  if (s.charCodeAt(0) !== OPEN || s.charCodeAt(s.length - 1) !== CLOSE) return false;
  return walk(s, 0, (_, c, depth) => c === CLOSE && depth === 1) === s.length - 1;
}

/** Splits on `sep` where it is outside quotes and parentheses. */
export function splitTopLevel(sql: string, sep: string): string[] {
  const code = sep.charCodeAt(0);
  const parts: string[] = [];
  let from = 0;
  walk(sql, 0, (i, c, depth) => {
    if (c === code && depth === 0 && c !== OPEN && c !== CLOSE) {
      parts.push(sql.slice(from, i));
      from = i + 1;
    }
    return false;
  });
  parts.push(sql.slice(from));
  return parts;
}

/** The statements of a query, comments removed, blank ones dropped. */
export function statements(sql: string): string[] {
  return splitTopLevel(stripComments(sql.slice(0, MAX_SQL_CHARS)), ";")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Whether the words of `keyword` (lower case, single spaces) stand at `at`, whole. */
function keywordAt(sql: string, at: number, keyword: string): boolean {
  let i = at;
  for (let k = 0; k < keyword.length; k++) {
    const want = keyword.charCodeAt(k);
    if (want === 32) {
      if (!/\s/.test(sql[i] ?? "")) return false;
      while (/\s/.test(sql[i] ?? "")) i++;
    } else if ((sql.charCodeAt(i++) | 0x20) !== want) return false;
  }
  return i >= sql.length || !isWordChar(sql.charCodeAt(i));
}

/**
 * Where a keyword occurs at the top level (outside quotes and parentheses, as a whole word), or
 * -1. `keyword` is matched case-insensitively and may hold spaces ("ORDER BY").
 */
export function findKeyword(sql: string, keyword: string, from = 0): number {
  const word = keyword.toLowerCase();
  const initial = word.charCodeAt(0);
  return walk(sql, from, (i, c, depth) => depth === 0 && (c | 0x20) === initial && (i === 0 || !isWordChar(sql.charCodeAt(i - 1))) && keywordAt(sql, i, word));
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

/**
 * MySQL's LIKE: `%` any run, `_` one character, backslash escapes; case-insensitive as under its
 * default collation. Matched by the two-pointer wildcard walk, O(pattern x value) at worst: a
 * regular expression of many `%` backtracks exponentially on a value that does not match.
 */
export function likeMatcher(pattern: string): (value: string) => boolean {
  type Token = { any: true } | { one: true } | { char: string };
  const tokens: Token[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "\\" && i + 1 < pattern.length) tokens.push({ char: pattern[++i]!.toLowerCase() });
    else if (c === "%") tokens.push({ any: true });
    else if (c === "_") tokens.push({ one: true });
    else tokens.push({ char: c.toLowerCase() });
  }
  return (raw) => {
    const value = raw.toLowerCase();
    let p = 0;
    let v = 0;
    let star = -1;
    let resume = 0;
    while (v < value.length) {
      const t = tokens[p];
      if (t && "any" in t) {
        star = p++;
        resume = v;
      } else if (t && ("one" in t || t.char === value[v])) {
        p++;
        v++;
      } else if (star >= 0) {
        p = star + 1;
        v = ++resume;
      } else return false;
    }
    while (p < tokens.length && "any" in tokens[p]!) p++;
    return p === tokens.length;
  };
}

/** The text of a syntax error's "near '...'": what follows the error, cut where mysqld cuts it. */
export function near(rest: string): string {
  return rest.trim().slice(0, 80);
}
