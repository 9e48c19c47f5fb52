/**
 * The CLI's exit codes, which scripts rely on: 0 ok, 1 the operation failed (Core unreachable,
 * unknown node, a command the node reported as failed, a time-out), 2 the command line itself
 * was wrong (commander reports those before any action runs).
 */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure to report as one line on stderr: what went wrong and what to do about it. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: typeof EXIT_FAILURE | typeof EXIT_USAGE = EXIT_FAILURE,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, EXIT_USAGE);

/** Core (its REST API or WebSocket proxy) did not answer at all: worth trying again later. */
export class Unreachable extends CliError {
  override name = "Unreachable";
}
