/**
 * Whether a failure says the PostgreSQL server cannot be reached (rather than that it refused
 * what was asked): REST answers 503 for it, and queued writes are tried again.
 */

// Bun's client codes for a connection it could not make or lost, SQLSTATE class 08 (connection
// exception) and 57P01-57P03 (the server shutting down or starting), and the system's own.
const UNREACHABLE_CODES = /^(ERR_POSTGRES_CONNECTION_\w+|ERR_POSTGRES_(IDLE|LIFETIME)_TIMEOUT|08\w{3}|57P0[123]|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/;

/** The error behind a failure when it says the database server cannot be reached (drivers may wrap it in `cause`). */
export function databaseUnreachable(error: unknown): Error | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const { code, errno } = e as { code?: unknown; errno?: unknown };
    if ((typeof code === "string" && UNREACHABLE_CODES.test(code)) || (typeof errno === "string" && UNREACHABLE_CODES.test(errno))) return e;
  }
  return null;
}
