/**
 * Turns "address in use" at start-up into an error that names the port and the flag that
 * changes it, instead of a stack trace.
 */
export class PortInUseError extends Error {
  constructor(
    readonly key: string,
    readonly port: number,
    host: string,
    what = key,
  ) {
    super(`cannot listen on ${host}:${port} (${what}): the port is already in use; stop the other process or choose another port with --${key.replace(/_/g, "-")}`);
    this.name = "PortInUseError";
  }
}

export function bindOrExplain<T>(key: string, host: string, port: number, listen: () => T, what = key): T {
  try {
    return listen();
  } catch (e) {
    const err = e as { code?: string; message?: string };
    if (err.code === "EADDRINUSE" || /in use|EADDRINUSE/i.test(err.message ?? "")) throw new PortInUseError(key, port, host, what);
    throw e;
  }
}
