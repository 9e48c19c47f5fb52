/**
 * The one place loggers are made. Components take a logger (a child named after them) instead
 * of importing a global, so tests can pass a silent one.
 */
import pino, { type Logger } from "pino";

export type { Logger };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Fields that must never reach a log line (credentials). */
const REDACT = ["token", "*.token", "authorization", "*.authorization", "headers.authorization", "totp_key", "*.totp_key", "secret", "*.secret"];

export function createLogger(level: LogLevel = "info", options: { pretty?: boolean } = {}): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true && !process.env.CI);
  if (pretty) {
    // pino-pretty in the same thread: a worker transport would keep tests and short commands alive.
    const prettyStream = require("pino-pretty")({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" });
    return pino({ level, redact: REDACT, base: undefined }, prettyStream);
  }
  return pino({ level, redact: REDACT, base: undefined, timestamp: pino.stdTimeFunctions.isoTime });
}

export const silentLogger = (): Logger => pino({ level: "silent" });
