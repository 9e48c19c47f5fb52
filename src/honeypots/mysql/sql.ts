/**
 * The fake server's answer to a query: each statement gets what MySQL 8.0 would send on a fresh
 * install, as far as attackers' tools look. Reads come from the catalogue; writes (INSERT, CREATE,
 * DROP, GRANT...) are answered OK and change nothing; file access fails as secure_file_priv makes
 * it fail; the unknown is a syntax error, as MySQL's parser would say.
 */
import type { Catalog, Table } from "./catalog.ts";
import type { SqlContext, SqlSession } from "./expr.ts";
import { errors, type Outcome, type Value } from "./outcome.ts";
import { type Column, TYPE } from "./packets.ts";
import { select } from "./select.ts";
import { findKeyword, identifierPath, likeMatcher, splitTopLevel, statements, stringLiteral } from "./sql-text.ts";

export type { SqlSession } from "./expr.ts";

/** Statements that change something: OK, 0 rows, and nothing changes. */
const ACCEPTED = new Set(
  "ALTER ANALYZE BEGIN CACHE CALL CHANGE CHECKSUM COMMIT DEALLOCATE DELETE DO DROP EXECUTE FLUSH GRANT HANDLER INSTALL KILL LOCK OPTIMIZE PREPARE PURGE RELEASE RENAME REPAIR RESET REVOKE ROLLBACK SAVEPOINT SET START STOP TRUNCATE UNINSTALL UNLOCK XA".split(" "),
);

function rows(names: string[], data: Value[][], numeric: string[] = []): Outcome {
  return { kind: "rows", columns: names.map((name): Column => ({ name, type: numeric.includes(name) ? TYPE.LONGLONG : TYPE.VAR_STRING })), rows: data };
}

/** `LIKE 'pattern'` or `WHERE col = 'x'` after a SHOW: a test on the first column, and its text. */
function showFilter(rest: string): { test: (v: string) => boolean; pattern: string | null } | null {
  const like = /^like\s+('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")\s*$/i.exec(rest);
  if (like) {
    const pattern = stringLiteral(like[1]!)!;
    return { test: likeMatcher(pattern), pattern };
  }
  const where = /^where\s+`?\w+`?\s*(=|like)\s*('(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*")\s*$/i.exec(rest);
  if (where) {
    const value = stringLiteral(where[2]!)!;
    return { test: where[1] === "=" ? (v) => v.toLowerCase() === value.toLowerCase() : likeMatcher(value), pattern: null };
  }
  return rest.trim() === "" ? { test: () => true, pattern: null } : null;
}

function resolveTable(ref: string, dbRef: string | undefined, ctx: SqlContext): { db: string; name: string; table: Table } | Outcome {
  const path = identifierPath(ref);
  if (!path || path.length > 2) return errors.syntax(ref);
  const explicit = dbRef === undefined ? undefined : identifierPath(dbRef)?.[0];
  const db = path.length === 2 ? path[0]! : (explicit ?? ctx.session.database);
  const name = path[path.length - 1]!;
  if (db === null) return errors.noDatabase();
  const table = ctx.catalog.table(db, name);
  return table ? { db, name, table } : errors.noTable(db, name);
}

function describe(ref: string, dbRef: string | undefined, ctx: SqlContext): Outcome {
  const found = resolveTable(ref, dbRef, ctx);
  if ("kind" in found) return found;
  return rows(
    ["Field", "Type", "Null", "Key", "Default", "Extra"],
    found.table.columns.map(([name, type], i) => [name, type, i === 0 ? "NO" : "YES", i === 0 ? "PRI" : "", null, i === 0 && /int/.test(type) ? "auto_increment" : ""]),
  );
}

function createTable(db: string, name: string, table: Table): string {
  const lines = table.columns.map(([c, type], i) => `  \`${c}\` ${type}${i === 0 ? ` NOT NULL${/int/.test(type) ? " AUTO_INCREMENT" : ""}` : " DEFAULT NULL"}`);
  lines.push(`  PRIMARY KEY (\`${table.columns[0]![0]}\`)`);
  return `CREATE TABLE \`${name}\` (\n${lines.join(",\n")}\n) ENGINE=InnoDB DEFAULT CHARSET=${db === "mysql" ? "utf8mb3" : "utf8mb4"} COLLATE=${db === "mysql" ? "utf8mb3_bin" : "utf8mb4_0900_ai_ci"}`;
}

function show(rest: string, ctx: SqlContext): Outcome {
  const { catalog, session } = ctx;
  let m: RegExpExecArray | null;
  if ((m = /^(?:databases|schemas)\b\s*([\s\S]*)$/i.exec(rest))) {
    const f = showFilter(m[1]!);
    if (!f) return errors.syntax(m[1]!);
    return rows([f.pattern === null ? "Database" : `Database (${f.pattern})`], catalog.databases().filter(f.test).map((d) => [d]));
  }
  if ((m = /^(full\s+)?tables\b\s*(?:(?:from|in)\s+(`[^`]+`|[\w$]+)\s*)?([\s\S]*)$/i.exec(rest))) {
    const db = m[2] ? identifierPath(m[2])![0]! : session.database;
    if (db === null) return errors.noDatabase();
    if (!catalog.hasDatabase(db)) return errors.unknownDatabase(db);
    const f = showFilter(m[3]!);
    if (!f) return errors.syntax(m[3]!);
    const names = catalog.tableNames(db).filter(f.test);
    const header = f.pattern === null ? `Tables_in_${db}` : `Tables_in_${db} (${f.pattern})`;
    if (m[1]) return rows([header, "Table_type"], names.map((t) => [t, db === "sys" ? "VIEW" : db === "information_schema" ? "SYSTEM VIEW" : "BASE TABLE"]));
    return rows([header], names.map((t) => [t]));
  }
  if ((m = /^(?:global\s+|session\s+|local\s+)?(variables|status)\b\s*([\s\S]*)$/i.exec(rest))) {
    const f = showFilter(m[2]!);
    if (!f) return errors.syntax(m[2]!);
    const uptime = Math.max(1, Math.floor((ctx.now.getTime() - catalog.info.startedAt) / 1000));
    const source: [string, string][] =
      m[1]!.toLowerCase() === "variables"
        ? [...catalog.variables.entries()].sort(([a], [b]) => (a < b ? -1 : 1))
        : [
            ["Aborted_connects", "3"],
            ["Connections", String(session.connectionId)],
            ["Queries", String(uptime * 3)],
            ["Threads_connected", "1"],
            ["Threads_running", "2"],
            ["Uptime", String(uptime)],
          ];
    return rows(["Variable_name", "Value"], source.filter(([name]) => f.test(name)));
  }
  if (/^grants\b/i.test(rest)) {
    const who = `${session.user}@%`;
    return rows([`Grants for ${who}`], [[`GRANT ALL PRIVILEGES ON *.* TO \`${session.user}\`@\`%\` WITH GRANT OPTION`], [`GRANT PROXY ON \`\`@\`\` TO \`${session.user}\`@\`%\` WITH GRANT OPTION`]]);
  }
  if (/^(full\s+)?processlist\s*$/i.test(rest)) {
    const uptime = Math.floor((ctx.now.getTime() - catalog.info.startedAt) / 1000);
    return rows(
      ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"],
      [
        ["5", "event_scheduler", "localhost", null, "Daemon", String(uptime), "Waiting on empty queue", null],
        [String(session.connectionId), session.user, `${session.host}:${40000 + (session.connectionId % 20000)}`, session.database, "Query", "0", "init", "SHOW PROCESSLIST"],
      ],
      ["Id", "Time"],
    );
  }
  if ((m = /^(?:full\s+)?(?:columns|fields)\s+(?:from|in)\s+(`[^`]+`|[\w$.`]+)(?:\s+(?:from|in)\s+(`[^`]+`|[\w$]+))?\s*$/i.exec(rest))) {
    return describe(m[1]!, m[2], ctx);
  }
  if ((m = /^create\s+(?:database|schema)\s+(`[^`]+`|[\w$]+)\s*$/i.exec(rest))) {
    const db = identifierPath(m[1]!)![0]!;
    if (!catalog.hasDatabase(db)) return errors.unknownDatabase(db);
    return rows(["Database", "Create Database"], [[db, `CREATE DATABASE \`${db}\` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci */ /*!80016 DEFAULT ENCRYPTION='N' */`]]);
  }
  if ((m = /^create\s+table\s+(`[^`]+`(?:\.`[^`]+`)?|[\w$.`]+)\s*$/i.exec(rest))) {
    const found = resolveTable(m[1]!, undefined, ctx);
    if ("kind" in found) return found;
    return rows(["Table", "Create Table"], [[found.name, createTable(found.db, found.name, found.table)]]);
  }
  if (/^(warnings|errors)\b/i.test(rest)) return rows(["Level", "Code", "Message"], [], ["Code"]);
  if (/^(master|binary log|binlog)\s+status\s*$/i.test(rest)) return rows(["File", "Position", "Binlog_Do_DB", "Binlog_Ignore_DB", "Executed_Gtid_Set"], [["binlog.000042", "157", "", "", ""]], ["Position"]);
  if (/^(slave|replica)\s+status\s*$/i.test(rest)) return rows(["Replica_IO_State", "Source_Host", "Source_User", "Source_Port"], []);
  if (/^engines\s*$/i.test(rest)) {
    return rows(
      ["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"],
      [
        ["InnoDB", "DEFAULT", "Supports transactions, row-level locking, and foreign keys", "YES", "YES", "YES"],
        ["MyISAM", "YES", "MyISAM storage engine", "NO", "NO", "NO"],
        ["MEMORY", "YES", "Hash based, stored in memory, useful for temporary tables", "NO", "NO", "NO"],
        ["PERFORMANCE_SCHEMA", "YES", "Performance Schema", "NO", "NO", "NO"],
      ],
    );
  }
  return errors.syntax(rest);
}

function use(rest: string, session: SqlSession, catalog: Catalog): Outcome {
  const db = identifierPath(rest)?.[0];
  if (!db) return errors.syntax(rest);
  if (!catalog.hasDatabase(db)) return errors.unknownDatabase(db);
  session.database = db;
  return { kind: "ok" };
}

/** One statement, comments already removed. */
export function statement(text: string, ctx: SqlContext): Outcome {
  const m = /^\(*\s*([A-Za-z_]+)\b\s*([\s\S]*)$/.exec(text);
  if (!m) return errors.syntax(text);
  const verb = m[1]!.toUpperCase();
  let rest = m[2]!.trim();
  // "(SELECT 1)": the closing parentheses go with the opening ones (trimmed by hand: a regular
  // expression for a run at the end backtracks quadratically over a long run elsewhere).
  if (text.startsWith("(")) {
    let end = rest.length;
    while (end > 0 && rest[end - 1] === ")") end--;
    rest = rest.slice(0, end).trimEnd();
  }
  switch (verb) {
    case "SELECT":
      return select(rest, ctx);
    case "SHOW":
      return show(rest, ctx);
    case "USE":
      return use(rest, ctx.session, ctx.catalog);
    case "DESCRIBE":
    case "DESC":
    case "EXPLAIN": {
      const t = /^(`[^`]+`(?:\.`[^`]+`)?|[\w$.`]+)\s*$/.exec(rest);
      if (t && !/^(select|insert|update|delete|replace|table|with)$/i.test(t[1]!)) return describe(t[1]!, undefined, ctx);
      return rows(["id", "select_type", "table", "partitions", "type", "possible_keys", "key", "key_len", "ref", "rows", "filtered", "Extra"], [["1", "SIMPLE", null, null, null, null, null, null, null, null, null, "No tables used"]], ["id"]);
    }
    case "INSERT":
    case "REPLACE": {
      const values = findKeyword(rest, "VALUES") >= 0 ? findKeyword(rest, "VALUES") : findKeyword(rest, "VALUE");
      const tuples = values >= 0 ? splitTopLevel(rest.slice(values).replace(/^values?\s*/i, ""), ",").length : 1;
      return { kind: "ok", affectedRows: tuples, info: tuples > 1 ? `Records: ${tuples}  Duplicates: 0  Warnings: 0` : undefined };
    }
    case "UPDATE":
      return { kind: "ok", info: "Rows matched: 0  Changed: 0  Warnings: 0" };
    case "CREATE":
      return { kind: "ok", affectedRows: /^(database|schema)\b/i.test(rest) ? 1 : 0 };
    case "LOAD":
      return /^(data|xml)\s+(low_priority\s+|concurrent\s+)?local\b/i.test(rest) ? errors.localInfile() : errors.secureFilePriv();
    default:
      return ACCEPTED.has(verb) ? { kind: "ok" } : errors.syntax(text);
  }
}

/**
 * Every statement of a query, in order, up to the first error (where mysqld stops too). Without
 * CLIENT_MULTI_STATEMENTS a second statement is a syntax error at its start, as MySQL reports it.
 */
export function runQuery(sql: string, session: SqlSession, catalog: Catalog, multi: boolean, now = new Date()): Outcome[] {
  const list = statements(sql);
  if (list.length === 0) return [errors.empty()];
  if (!multi && list.length > 1) return [errors.syntax(list.slice(1).join("; "))];
  const out: Outcome[] = [];
  const ctx: SqlContext = { catalog, session, now };
  for (const text of list.slice(0, 64)) {
    const outcome = statement(text, ctx);
    out.push(outcome);
    if (outcome.kind === "error") break;
  }
  return out;
}

/** COM_STATISTICS's one line, as mysqladmin status prints it. */
export function statistics(catalog: Catalog, now = new Date()): string {
  const uptime = Math.max(1, Math.floor((now.getTime() - catalog.info.startedAt) / 1000));
  return `Uptime: ${uptime}  Threads: 2  Questions: ${uptime * 3}  Slow queries: 0  Opens: 119  Flush tables: 3  Open tables: 38  Queries per second avg: 3.000`;
}
