/** What one SQL statement comes to, and MySQL's own errors for the fake server's answers. */
import type { Column } from "./packets.ts";
import { near } from "./sql-text.ts";

export type Value = string | null;

export type Outcome =
  | { kind: "ok"; affectedRows?: number; info?: string }
  | { kind: "rows"; columns: Column[]; rows: Value[][] }
  | { kind: "error"; code: number; state: string; message: string };

export type ErrorOutcome = Extract<Outcome, { kind: "error" }>;

function error(code: number, state: string, message: string): ErrorOutcome {
  return { kind: "error", code, state, message };
}

/** Word for word as mysqld 8.0 says them (share/messages_to_clients.txt). */
export const errors = {
  syntax: (rest: string, line = 1) =>
    error(1064, "42000", `You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '${near(rest)}' at line ${line}`),
  empty: () => error(1065, "42000", "Query was empty"),
  noDatabase: () => error(1046, "3D000", "No database selected"),
  unknownDatabase: (db: string) => error(1049, "42000", `Unknown database '${db}'`),
  noTable: (db: string, table: string) => error(1146, "42S02", `Table '${db}.${table}' doesn't exist`),
  unknownColumn: (column: string, where = "field list") => error(1054, "42S22", `Unknown column '${column}' in '${where}'`),
  unknownVariable: (name: string) => error(1193, "HY000", `Unknown system variable '${name}'`),
  secureFilePriv: () => error(1290, "HY000", "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"),
  localInfile: () => error(3948, "42000", "Loading local data is disabled; this must be enabled on both the client and server sides"),
  columnCount: () => error(1222, "21000", "The used SELECT statements have a different number of columns"),
  accessDenied: (user: string, host: string, usingPassword: boolean) =>
    error(1045, "28000", `Access denied for user '${user}'@'${host}' (using password: ${usingPassword ? "YES" : "NO"})`),
  unknownCommand: () => error(1047, "08S01", "Unknown command"),
  packetTooLarge: () => error(1153, "08S01", "Got a packet bigger than 'max_allowed_packet' bytes"),
  badHandshake: () => error(1043, "08S01", "Bad handshake"),
  oldClient: () => error(1251, "08004", "Client does not support authentication protocol requested by server; consider upgrading MySQL client"),
  preparedUnsupported: () => error(1295, "HY000", "This command is not supported in the prepared statement protocol yet"),
};
