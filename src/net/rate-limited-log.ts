import type { Logger } from "../log";

/**
 * Logs at most `perInterval` lines per key per interval and then one summary of how many were
 * suppressed, so a peer that floods us with garbage cannot flood the log too.
 */
export class RateLimitedLog {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly logger: Logger,
    private readonly perInterval = 5,
    private readonly intervalMs = 10_000,
  ) {}

  warn(key: string, fields: Record<string, unknown>, msg: string): void {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || now - w.start >= this.intervalMs) {
      if (w && w.count > this.perInterval) this.logger.warn({ key, suppressed: w.count - this.perInterval }, "suppressed repeated warnings");
      w = { start: now, count: 0 };
      this.windows.set(key, w);
      if (this.windows.size > 10_000) this.windows.clear();
    }
    if (++w.count <= this.perInterval) this.logger.warn(fields, msg);
  }
}
