/**
 * What the fake MySQL 8.0 server holds: its system variables, its schemas and their tables, as a
 * fresh Debian install of MySQL Community Server with one application database (a WordPress
 * site's, named by `bait_database`) would show them. Nothing here changes: what an attacker
 * creates, inserts or drops is answered with OK and forgotten.
 */
import { createHash } from "node:crypto";
import { splitTopLevel } from "./sql-text.ts";

export interface ServerInfo {
  version: string;
  hostname: string;
  port: number;
  baitDatabase: string;
  /** Account plugin (default_authentication_plugin). */
  authPlugin: string;
  startedAt: number;
}

export interface Table {
  /** Name and SQL type of each column, as DESCRIBE shows them. */
  columns: [string, string][];
  rows: (string | null)[][];
}

export const VERSION_COMMENT = "MySQL Community Server - GPL";

/** System variables, lower-case names; what SHOW VARIABLES and @@name read. */
export function systemVariables(info: ServerInfo): Map<string, string> {
  return new Map([
    ["autocommit", "ON"],
    ["auto_increment_increment", "1"],
    ["basedir", "/usr/"],
    ["bind_address", "*"],
    ["character_set_client", "utf8mb4"],
    ["character_set_connection", "utf8mb4"],
    ["character_set_database", "utf8mb4"],
    ["character_set_results", "utf8mb4"],
    ["character_set_server", "utf8mb4"],
    ["character_set_system", "utf8mb3"],
    ["collation_connection", "utf8mb4_0900_ai_ci"],
    ["collation_database", "utf8mb4_0900_ai_ci"],
    ["collation_server", "utf8mb4_0900_ai_ci"],
    ["datadir", "/var/lib/mysql/"],
    ["default_authentication_plugin", info.authPlugin],
    ["default_storage_engine", "InnoDB"],
    ["general_log", "OFF"],
    ["general_log_file", `/var/lib/mysql/${info.hostname}.log`],
    ["have_openssl", "DISABLED"],
    ["have_ssl", "DISABLED"],
    ["hostname", info.hostname],
    ["init_connect", ""],
    ["innodb_version", info.version],
    ["interactive_timeout", "28800"],
    ["license", "GPL"],
    ["local_infile", "OFF"],
    ["log_bin", "ON"],
    ["log_error", "/var/log/mysql/error.log"],
    ["lower_case_table_names", "0"],
    ["max_allowed_packet", "67108864"],
    ["max_connections", "151"],
    ["net_buffer_length", "16384"],
    ["net_write_timeout", "60"],
    ["performance_schema", "ON"],
    ["pid_file", "/var/run/mysqld/mysqld.pid"],
    ["plugin_dir", "/usr/lib/mysql/plugin/"],
    ["port", String(info.port)],
    ["protocol_version", "10"],
    ["query_cache_size", "0"],
    ["secure_file_priv", "/var/lib/mysql-files/"],
    ["server_id", "1"],
    ["skip_name_resolve", "OFF"],
    ["socket", "/var/run/mysqld/mysqld.sock"],
    ["sql_mode", "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"],
    ["system_time_zone", "UTC"],
    ["time_zone", "SYSTEM"],
    ["tmpdir", "/tmp"],
    ["transaction_isolation", "REPEATABLE-READ"],
    ["tx_isolation", "REPEATABLE-READ"],
    ["version", info.version],
    ["version_comment", VERSION_COMMENT],
    ["version_compile_machine", "x86_64"],
    ["version_compile_os", "Linux"],
    ["version_compile_zlib", "1.2.13"],
    ["wait_timeout", "28800"],
    ["innodb_buffer_pool_size", "134217728"],
    ["log_bin_basename", "/var/lib/mysql/binlog"],
    ["mysqlx_port", "33060"],
    ["admin_port", "33062"],
    ["default_collation_for_utf8mb4", "utf8mb4_0900_ai_ci"],
  ]);
}

/** Compact column lists: "name:type,name:type". */
function cols(spec: string): [string, string][] {
  return splitTopLevel(spec, ",").map((c) => {
    const cut = c.indexOf(":");
    return [c.slice(0, cut), c.slice(cut + 1)];
  });
}

/** A stored hash shaped like caching_sha2_password's ($A$005$, 20 salt characters, 43 of digest) that opens nothing. */
function fakeAuthString(seed: string): string {
  const chars = createHash("sha512").update(seed).digest("base64").replace(/[^A-Za-z0-9./]/g, "");
  return `$A$005$${chars.slice(0, 63)}`;
}

/** What MySQL 8 stores for its locked system accounts, word for word. */
const INVALID_SALT = "$A$005$THISISACOMBINATIONOFINVALIDSALTANDPASSWORDTHATMUSTNEVERBRBEUSED";

function mysqlSchema(info: ServerInfo): Map<string, Table> {
  const plugin = info.authPlugin;
  const user = (host: string, name: string, auth: string, locked: string) => [host, name, "Y", "Y", "Y", "Y", "Y", "Y", "Y", "Y", "Y", plugin, auth, "N", "2024-05-14 09:12:41", locked];
  const system = (name: string) => ["localhost", name, "N", "N", "N", "N", "N", "N", "N", "N", "N", "caching_sha2_password", INVALID_SALT, "N", "2024-05-14 09:12:38", "Y"];
  const empty = (spec: string): Table => ({ columns: cols(spec), rows: [] });
  return new Map<string, Table>([
    ["columns_priv", empty("Host:char(255),Db:char(64),User:char(32),Table_name:char(64),Column_name:char(64),Timestamp:timestamp,Column_priv:set('Select','Insert','Update','References')")],
    ["component", empty("component_id:int unsigned,component_group_id:int unsigned,component_urn:text")],
    ["db", empty("Host:char(255),Db:char(64),User:char(32),Select_priv:enum('N','Y'),Insert_priv:enum('N','Y'),Update_priv:enum('N','Y'),Delete_priv:enum('N','Y')")],
    ["default_roles", empty("HOST:char(255),USER:char(32),DEFAULT_ROLE_HOST:char(255),DEFAULT_ROLE_USER:char(32)")],
    ["engine_cost", empty("engine_name:varchar(64),device_type:int,cost_name:varchar(64),cost_value:float,last_update:timestamp,comment:varchar(1024),default_value:float")],
    ["func", empty("name:char(64),ret:tinyint,dl:char(128),type:enum('function','aggregate')")],
    ["general_log", empty("event_time:timestamp(6),user_host:mediumtext,thread_id:bigint unsigned,server_id:int unsigned,command_type:varchar(64),argument:mediumblob")],
    ["global_grants", empty("USER:char(32),HOST:char(255),PRIV:char(32),WITH_GRANT_OPTION:enum('N','Y')")],
    ["gtid_executed", empty("source_uuid:char(36),interval_start:bigint,interval_end:bigint")],
    ["help_topic", empty("help_topic_id:int unsigned,name:char(64),help_category_id:smallint unsigned,description:text,example:text,url:text")],
    ["innodb_index_stats", empty("database_name:varchar(64),table_name:varchar(199),index_name:varchar(64),last_update:timestamp,stat_name:varchar(64),stat_value:bigint unsigned")],
    ["innodb_table_stats", empty("database_name:varchar(64),table_name:varchar(199),last_update:timestamp,n_rows:bigint unsigned,clustered_index_size:bigint unsigned")],
    ["password_history", empty("Host:char(255),User:char(32),Password_timestamp:timestamp(6),Password:text")],
    ["plugin", empty("name:varchar(64),dl:varchar(128)")],
    ["procs_priv", empty("Host:char(255),Db:char(64),User:char(32),Routine_name:char(64),Routine_type:enum('FUNCTION','PROCEDURE'),Grantor:varchar(288),Proc_priv:set('Execute','Alter Routine','Grant'),Timestamp:timestamp")],
    ["proxies_priv", { columns: cols("Host:char(255),User:char(32),Proxied_host:char(255),Proxied_user:char(32),With_grant:tinyint(1),Grantor:varchar(288),Timestamp:timestamp"), rows: [["localhost", "root", "", "", "1", "boot@", "2024-05-14 09:12:41"]] }],
    ["role_edges", empty("FROM_HOST:char(255),FROM_USER:char(32),TO_HOST:char(255),TO_USER:char(32),WITH_ADMIN_OPTION:enum('N','Y')")],
    ["server_cost", empty("cost_name:varchar(64),cost_value:float,last_update:timestamp,comment:varchar(1024),default_value:float")],
    ["servers", empty("Server_name:char(64),Host:char(255),Db:char(64),Username:char(64),Password:char(64),Port:int,Socket:char(64),Wrapper:char(64),Owner:char(64)")],
    ["slow_log", empty("start_time:timestamp(6),user_host:mediumtext,query_time:time(6),lock_time:time(6),rows_sent:int,rows_examined:int,db:varchar(512),sql_text:mediumblob")],
    ["tables_priv", empty("Host:char(255),Db:char(64),User:char(32),Table_name:char(64),Grantor:varchar(288),Timestamp:timestamp,Table_priv:set('Select','Insert','Update','Delete','Create','Drop'),Column_priv:set('Select','Insert','Update','References')")],
    ["time_zone", empty("Time_zone_id:int unsigned,Use_leap_seconds:enum('Y','N')")],
    [
      "user",
      {
        columns: cols(
          "Host:char(255),User:char(32),Select_priv:enum('N','Y'),Insert_priv:enum('N','Y'),Update_priv:enum('N','Y'),Delete_priv:enum('N','Y'),Create_priv:enum('N','Y'),Drop_priv:enum('N','Y'),File_priv:enum('N','Y'),Grant_priv:enum('N','Y'),Super_priv:enum('N','Y'),plugin:char(64),authentication_string:text,password_expired:enum('N','Y'),password_last_changed:timestamp,account_locked:enum('N','Y')",
        ),
        rows: [
          user("%", "root", fakeAuthString(`${info.hostname}/root@%`), "N"),
          user("localhost", "root", fakeAuthString(`${info.hostname}/root@localhost`), "N"),
          system("mysql.infoschema"),
          system("mysql.session"),
          system("mysql.sys"),
        ],
      },
    ],
  ]);
}

function wordpressSchema(info: ServerInfo): Map<string, Table> {
  const empty = (spec: string): Table => ({ columns: cols(spec), rows: [] });
  const site = `http://${info.hostname}`;
  return new Map<string, Table>([
    ["wp_commentmeta", empty("meta_id:bigint unsigned,comment_id:bigint unsigned,meta_key:varchar(255),meta_value:longtext")],
    ["wp_comments", empty("comment_ID:bigint unsigned,comment_post_ID:bigint unsigned,comment_author:tinytext,comment_author_email:varchar(100),comment_author_IP:varchar(100),comment_date:datetime,comment_content:text,comment_approved:varchar(20),user_id:bigint unsigned")],
    ["wp_links", empty("link_id:bigint unsigned,link_url:varchar(255),link_name:varchar(255),link_visible:varchar(20),link_owner:bigint unsigned")],
    [
      "wp_options",
      {
        columns: cols("option_id:bigint unsigned,option_name:varchar(191),option_value:longtext,autoload:varchar(20)"),
        rows: [
          ["1", "siteurl", site, "yes"],
          ["2", "home", site, "yes"],
          ["3", "blogname", "My Blog", "yes"],
          ["4", "blogdescription", "", "yes"],
          ["6", "admin_email", `admin@${info.hostname}`, "yes"],
          ["34", "db_version", "57155", "yes"],
          ["48", "template", "twentytwentyfour", "yes"],
          ["49", "stylesheet", "twentytwentyfour", "yes"],
        ],
      },
    ],
    ["wp_postmeta", empty("meta_id:bigint unsigned,post_id:bigint unsigned,meta_key:varchar(255),meta_value:longtext")],
    [
      "wp_posts",
      {
        columns: cols("ID:bigint unsigned,post_author:bigint unsigned,post_date:datetime,post_content:longtext,post_title:text,post_status:varchar(20),post_name:varchar(200),post_type:varchar(20)"),
        rows: [
          ["1", "1", "2024-05-14 09:31:02", "<!-- wp:paragraph --><p>Welcome to WordPress. This is your first post. Edit or delete it, then start writing!</p><!-- /wp:paragraph -->", "Hello world!", "publish", "hello-world", "post"],
          ["2", "1", "2024-05-14 09:31:02", "", "Sample Page", "publish", "sample-page", "page"],
        ],
      },
    ],
    ["wp_term_relationships", empty("object_id:bigint unsigned,term_taxonomy_id:bigint unsigned,term_order:int")],
    ["wp_term_taxonomy", empty("term_taxonomy_id:bigint unsigned,term_id:bigint unsigned,taxonomy:varchar(32),description:longtext,parent:bigint unsigned,count:bigint")],
    ["wp_termmeta", empty("meta_id:bigint unsigned,term_id:bigint unsigned,meta_key:varchar(255),meta_value:longtext")],
    ["wp_terms", { columns: cols("term_id:bigint unsigned,name:varchar(200),slug:varchar(200),term_group:bigint"), rows: [["1", "Uncategorized", "uncategorized", "0"]] }],
    ["wp_usermeta", empty("umeta_id:bigint unsigned,user_id:bigint unsigned,meta_key:varchar(255),meta_value:longtext")],
    [
      "wp_users",
      {
        columns: cols("ID:bigint unsigned,user_login:varchar(60),user_pass:varchar(255),user_nicename:varchar(50),user_email:varchar(100),user_url:varchar(100),user_registered:datetime,user_activation_key:varchar(255),user_status:int,display_name:varchar(250)"),
        rows: [["1", "admin", "$P$BxJ4h7R0cL2mWq9vZs8tYk3nD1fE6a.", "admin", `admin@${info.hostname}`, site, "2024-05-14 09:31:02", "", "0", "admin"]],
      },
    ],
  ]);
}

function namesOnly(spec: string, columns: string): Map<string, Table> {
  return new Map(spec.split(",").map((name) => [name, { columns: cols(columns), rows: [] }]));
}

export class Catalog {
  readonly variables: Map<string, string>;
  private readonly schemas: Map<string, Map<string, Table>>;

  constructor(readonly info: ServerInfo) {
    this.variables = systemVariables(info);
    const schemas = new Map<string, Map<string, Table>>([
      ["mysql", mysqlSchema(info)],
      [
        "performance_schema",
        namesOnly(
          "accounts,events_statements_current,events_statements_history,events_waits_current,global_status,global_variables,hosts,processlist,session_status,session_variables,socket_instances,threads,users",
          "HOST:char(255),USER:char(32),CURRENT_CONNECTIONS:bigint,TOTAL_CONNECTIONS:bigint",
        ),
      ],
      ["sys", namesOnly("host_summary,io_global_by_file_by_bytes,memory_global_total,processlist,schema_table_statistics,session,statement_analysis,user_summary,version", "host:varchar(255),statements:decimal(64,0),total_latency:varchar(11)")],
    ]);
    // The bait replaces nothing: a name that clashes with a system schema keeps the system one.
    if (!schemas.has(info.baitDatabase) && info.baitDatabase !== "information_schema") schemas.set(info.baitDatabase, wordpressSchema(info));
    this.schemas = schemas;
  }

  /** Schema names as SHOW DATABASES lists them (sorted, information_schema included). */
  databases(): string[] {
    return ["information_schema", ...this.schemas.keys()].sort();
  }

  hasDatabase(name: string): boolean {
    return name === "information_schema" || this.schemas.has(name);
  }

  tableNames(db: string): string[] {
    if (db === "information_schema") return ["COLUMNS", "SCHEMATA", "TABLES"];
    return [...(this.schemas.get(db)?.keys() ?? [])].sort();
  }

  /** A table's columns and rows; information_schema's are built from the catalogue itself. */
  table(db: string, name: string): Table | null {
    if (db.toLowerCase() === "information_schema") return this.informationSchema(name.toUpperCase());
    return this.schemas.get(db)?.get(name) ?? null;
  }

  private informationSchema(name: string): Table | null {
    const dbs = this.databases();
    switch (name) {
      case "SCHEMATA":
        return {
          columns: cols("CATALOG_NAME:varchar(64),SCHEMA_NAME:varchar(64),DEFAULT_CHARACTER_SET_NAME:varchar(64),DEFAULT_COLLATION_NAME:varchar(64),SQL_PATH:binary(0),DEFAULT_ENCRYPTION:enum('NO','YES')"),
          rows: dbs.map((db) => ["def", db, db === "information_schema" ? "utf8mb3" : "utf8mb4", db === "information_schema" ? "utf8mb3_general_ci" : "utf8mb4_0900_ai_ci", null, "NO"]),
        };
      case "TABLES":
        return {
          columns: cols("TABLE_CATALOG:varchar(64),TABLE_SCHEMA:varchar(64),TABLE_NAME:varchar(64),TABLE_TYPE:enum('BASE TABLE','VIEW','SYSTEM VIEW'),ENGINE:varchar(64),TABLE_ROWS:bigint unsigned"),
          rows: dbs.flatMap((db) =>
            this.tableNames(db).map((t) => ["def", db, t, db === "information_schema" ? "SYSTEM VIEW" : db === "sys" ? "VIEW" : "BASE TABLE", db === "information_schema" || db === "sys" ? null : "InnoDB", db === "information_schema" ? null : String(this.table(db, t)?.rows.length ?? 0)]),
          ),
        };
      case "COLUMNS":
        return {
          columns: cols("TABLE_CATALOG:varchar(64),TABLE_SCHEMA:varchar(64),TABLE_NAME:varchar(64),COLUMN_NAME:varchar(64),ORDINAL_POSITION:int unsigned,DATA_TYPE:longtext,COLUMN_TYPE:mediumtext"),
          rows: dbs
            .filter((db) => db !== "information_schema")
            .flatMap((db) =>
              this.tableNames(db).flatMap((t) => (this.table(db, t)?.columns ?? []).map(([c, type], i) => ["def", db, t, c, String(i + 1), type.replace(/[( ].*$/, ""), type])),
            ),
        };
      default:
        return null;
    }
  }
}
