import { describe, expect, test } from "bun:test";
import { Catalog } from "../../src/honeypots/mysql/catalog";
import type { Outcome } from "../../src/honeypots/mysql/outcome";
import { runQuery, type SqlSession, statistics } from "../../src/honeypots/mysql/sql";
import { splitAlias } from "../../src/honeypots/mysql/expr";
import { likeMatcher, statements, stripComments } from "../../src/honeypots/mysql/sql-text";

const catalog = new Catalog({ version: "8.0.39", hostname: "db01", port: 3306, baitDatabase: "shop", authPlugin: "caching_sha2_password", startedAt: Date.UTC(2026, 0, 1) });
const NOW = new Date(Date.UTC(2026, 0, 2, 3, 4, 5));

function session(database: string | null = null): SqlSession {
  return { user: "root", host: "203.0.113.7", database, connectionId: 42 };
}

/** A statement's result as the client would print it: a header and rows, OK, or the error line. */
function run(sql: string, s = session(), multi = true): unknown[] {
  return runQuery(sql, s, catalog, multi, NOW).map((o: Outcome) => {
    if (o.kind === "rows") return [o.columns.map((c) => c.name), ...o.rows];
    if (o.kind === "ok") return { ok: o.affectedRows ?? 0, ...(o.info ? { info: o.info } : {}) };
    return `ERROR ${o.code} (${o.state}): ${o.message}`;
  });
}

describe("what clients ask on connect", () => {
  test("version queries", () => {
    expect(run("select @@version_comment limit 1")).toEqual([[["@@version_comment"], ["MySQL Community Server - GPL"]]]);
    expect(run("SELECT @@version")).toEqual([[["@@version"], ["8.0.39"]]]);
    expect(run("SELECT VERSION(), @@global.version AS v")).toEqual([[["VERSION()", "v"], ["8.0.39", "8.0.39"]]]);
    expect(run("/* mysql-connector-java-8.0.33 */SELECT @@session.auto_increment_increment AS auto_increment_increment, @@character_set_client AS character_set_client")).toEqual([
      [["auto_increment_increment", "character_set_client"], ["1", "utf8mb4"]],
    ]);
  });

  test("who and where", () => {
    expect(run("SELECT USER(), CURRENT_USER(), DATABASE(), CONNECTION_ID()")).toEqual([[["USER()", "CURRENT_USER()", "DATABASE()", "CONNECTION_ID()"], ["root@203.0.113.7", "root@%", null, "42"]]]);
    expect(run("select now(), 'it''s', 1+2, sleep(10), load_file('/etc/passwd')")).toEqual([
      [["now()", "it's", "1+2", "sleep(10)", "load_file('/etc/passwd')"], ["2026-01-02 03:04:05", "it's", "3", "0", null]],
    ]);
    expect(run("SELECT @@nope")).toEqual(["ERROR 1193 (HY000): Unknown system variable 'nope'"]);
  });

  test("SET, transactions and writes are accepted and change nothing", () => {
    expect(run("SET NAMES utf8mb4; SET autocommit=1; BEGIN; COMMIT")).toEqual([{ ok: 0 }, { ok: 0 }, { ok: 0 }, { ok: 0 }]);
    expect(run("INSERT INTO t VALUES (1),(2),(3)")).toEqual([{ ok: 3, info: "Records: 3  Duplicates: 0  Warnings: 0" }]);
    expect(run("CREATE DATABASE README_TO_RECOVER; DROP DATABASE shop")).toEqual([{ ok: 1 }, { ok: 0 }]);
    expect(run("SHOW DATABASES")[0]).toEqual([["Database"], ["information_schema"], ["mysql"], ["performance_schema"], ["shop"], ["sys"]]);
  });
});

describe("schemas and tables", () => {
  test("SHOW DATABASES and SHOW TABLES, with LIKE", () => {
    expect(run("show schemas like '%schema'")).toEqual([[["Database (%schema)"], ["information_schema"], ["performance_schema"]]]);
    expect(run("SHOW TABLES")).toEqual(["ERROR 1046 (3D000): No database selected"]);
    expect(run("SHOW TABLES FROM shop LIKE 'wp_user%'")).toEqual([[["Tables_in_shop (wp_user%)"], ["wp_usermeta"], ["wp_users"]]]);
    expect(run("show tables in nope")).toEqual(["ERROR 1049 (42000): Unknown database 'nope'"]);
  });

  test("USE changes the session's schema; an unknown one is refused", () => {
    const s = session();
    expect(run("USE shop", s)).toEqual([{ ok: 0 }]);
    expect(s.database).toBe("shop");
    expect(run("select database()", s)).toEqual([[["database()"], ["shop"]]]);
    expect(run("use `nope`", s)).toEqual(["ERROR 1049 (42000): Unknown database 'nope'"]);
    expect(s.database).toBe("shop");
  });

  test("SELECT from a table: columns, WHERE, COUNT, LIMIT", () => {
    expect(run("SELECT user_login, user_email FROM wp_users", session("shop"))).toEqual([[["user_login", "user_email"], ["admin", "admin@db01"]]]);
    expect(run("select User, Host from mysql.user where Host = 'localhost' and User like 'mysql.%' limit 1, 1")).toEqual([[["User", "Host"], ["mysql.session", "localhost"]]]);
    expect(run("select count(*) from mysql.user")).toEqual([[["count(*)"], ["5"]]]);
    expect(run("select nope from mysql.user")).toEqual(["ERROR 1054 (42S22): Unknown column 'nope' in 'field list'"]);
    expect(run("select * from shop.orders")).toEqual(["ERROR 1146 (42S02): Table 'shop.orders' doesn't exist"]);
    expect(run("select * from wp_users")).toEqual(["ERROR 1046 (3D000): No database selected"]);
    const [all] = run("select * from mysql.user") as unknown[][];
    expect((all![0] as string[]).slice(0, 2)).toEqual(["Host", "User"]);
    expect(all!.length).toBe(6);
  });

  test("information_schema describes the catalogue", () => {
    expect(run("select schema_name from information_schema.schemata where schema_name like 's%'")).toEqual([[["schema_name"], ["shop"], ["sys"]]]);
    expect(run("SELECT table_name FROM information_schema.tables WHERE table_schema = 'shop' LIMIT 2")).toEqual([[["table_name"], ["wp_commentmeta"], ["wp_comments"]]]);
  });

  test("DESCRIBE and SHOW VARIABLES", () => {
    const [desc] = run("DESCRIBE mysql.user") as unknown[][];
    expect(desc![0]).toEqual(["Field", "Type", "Null", "Key", "Default", "Extra"]);
    expect(desc![1]).toEqual(["Host", "char(255)", "NO", "PRI", null, ""]);
    expect(run("show variables like 'secure_file_priv'")).toEqual([[["Variable_name", "Value"], ["secure_file_priv", "/var/lib/mysql-files/"]]]);
    expect(run("SHOW GLOBAL VARIABLES WHERE Variable_name = 'hostname'")).toEqual([[["Variable_name", "Value"], ["hostname", "db01"]]]);
  });
});

describe("errors as mysqld words them", () => {
  test("syntax errors quote the text from the error on, at most 80 characters", () => {
    expect(run("foo bar")).toEqual([
      "ERROR 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'foo bar' at line 1",
    ]);
    const [long] = run(`xyzzy ${"a".repeat(200)}`) as string[];
    expect(long).toContain(`near 'xyzzy ${"a".repeat(74)}' at line 1`);
  });

  test("files stay out of reach, as under secure_file_priv and local_infile=OFF", () => {
    expect(run("SELECT 0x4d5a INTO DUMPFILE '/usr/lib/mysql/plugin/udf.so'")).toEqual([
      "ERROR 1290 (HY000): The MySQL server is running with the --secure-file-priv option so it cannot execute this statement",
    ]);
    expect(run("LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE t")).toEqual([
      "ERROR 3948 (42000): Loading local data is disabled; this must be enabled on both the client and server sides",
    ]);
  });

  test("statements stop at the first error; without multi-statements a second one is a syntax error", () => {
    expect(run("SELECT 1; bogus; SELECT 2")).toEqual([[["1"], ["1"]], expect.stringContaining("near 'bogus'")]);
    expect(run("SELECT 1; SELECT 2", session(), false)).toEqual([expect.stringContaining("near 'SELECT 2' at line 1")]);
    expect(run(" ; ")).toEqual(["ERROR 1065 (42000): Query was empty"]);
  });
});

describe("SQL text", () => {
  test("comments go, executable comments and quoted text stay", () => {
    expect(stripComments("SELECT 1 -- note\n, '-- kept' # gone\n/* x */ /*!40101 SET NAMES utf8 */").replace(/\s+/g, " ")).toBe("SELECT 1 , '-- kept' SET NAMES utf8 ");
    expect(statements("select ';'; select \"a;b\";;")).toEqual(["select ';'", 'select "a;b"']);
  });

  test("LIKE as MySQL matches it, in linear passes whatever the pattern", () => {
    const cases: [string, string, boolean][] = [
      ["wp_user%", "wp_users", true],
      ["wp\\_%", "wpxusers", false],
      ["wp\\_%", "wp_users", true],
      ["%SCHEMA", "performance_schema", true],
      ["_ys", "sys", true],
      ["_ys", "ys", false],
      ["%a%b%", "xaxxbx", true],
      ["%a%b%", "xbxxax", false],
      ["", "", true],
      ["%", "", true],
    ];
    for (const [pattern, value, expected] of cases) expect([pattern, value, likeMatcher(pattern)(value)]).toEqual([pattern, value, expected]);
    // A pattern that sends a backtracking matcher into exponential time.
    expect(likeMatcher(`${"%a".repeat(2000)}%b`)("a".repeat(5000))).toBe(false);
  });

  test("aliases, with AS or after a whole operand", () => {
    expect(splitAlias("@@version AS v")).toEqual({ expr: "@@version", alias: "v" });
    expect(splitAlias("COUNT(*) `n rows`")).toEqual({ expr: "COUNT(*)", alias: "n rows" });
    expect(splitAlias("user u")).toEqual({ expr: "user", alias: "u" });
    expect(splitAlias("1 + x")).toEqual({ expr: "1 + x", alias: null });
    expect(splitAlias("VERSION()")).toEqual({ expr: "VERSION()", alias: null });
    expect(splitAlias(`${"a ".repeat(50000)}b`).alias).toBeNull();
    expect(splitAlias(`CONCAT(${"'x',".repeat(20000)}'y') AS b`).alias).toBe("b");
  });

  test("COM_STATISTICS reads like mysqladmin status", () => {
    expect(statistics(catalog, NOW)).toMatch(/^Uptime: 97445 {2}Threads: 2 {2}Questions: \d+ {2}Slow queries: 0 {2}Opens: \d+ {2}Flush tables: 3 {2}Open tables: \d+ {2}Queries per second avg: [\d.]+$/);
  });
});
