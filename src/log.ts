/**
 * The one place loggers are made. Components take a logger (a child named after them) instead
 * of importing a global, so tests can pass a silent one.
 */
import pino, { type DestinationStream, type Logger } from "pino";
import { isoFormatter } from "./protocol/time";

export type { Logger };

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Fields that must never reach a log line (credentials). */
const REDACT = ["token", "*.token", "authorization", "*.authorization", "headers.authorization", "totp_key", "*.totp_key", "secret", "*.secret"];

/** Where a root logger keeps its event logger (children inherit it through their prototype). */
const EVENT_LOG = Symbol("honeybee.eventLog");

export function createLogger(level: LogLevel = "info", options: { pretty?: boolean } = {}): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true && !process.env.CI);
  // pino-pretty in the same thread: a worker transport would keep tests and short commands alive.
  const out: DestinationStream = pretty ? require("pino-pretty")({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname" }) : batchedStdout();
  const time = isoFormatter();
  const options_ = { level, base: undefined, timestamp: pretty ? true : () => `,"time":"${time(Date.now())}"` };
  const logger = pino({ ...options_, redact: REDACT }, out);
  Object.defineProperty(logger, EVENT_LOG, { value: pino(options_, out) });
  return logger;
}

/**
 * The logger for the one line per event (SPEC.md 6.2): same output and level, without the
 * redaction of Core's credentials. Event lines carry only what honeypots recorded, and
 * redaction's wildcard paths were a third of the cost of each line (measured).
 */
export function eventLogger(logger: Logger): Logger {
  const events = (logger as unknown as { [EVENT_LOG]?: Logger })[EVENT_LOG];
  return events ? events.child(logger.bindings()) : logger;
}

/**
 * Standard output for log lines, written once per turn of the event loop rather than once
 * per line: with one line per event (SPEC.md 6.2) the write() per line was most of the cost
 * of the event log (measured). Writes are synchronous (pino's own destination, which also
 * rides out a full pipe), so a line is out by the end of the turn that logged it, and what
 * is pending when the process exits is written then.
 */
function batchedStdout(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: true });
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    out.write(text);
  };
  process.on("exit", flush);
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= 1 << 16) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}

export const silentLogger = (): Logger => pino({ level: "silent" });
