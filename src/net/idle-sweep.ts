/**
 * Closes connections that stay silent too long, so that idle peers cannot hold connection slots
 * for good. One timer per listener looks at when each connection last sent something: cheaper
 * than re-arming a timer per chunk on a busy socket, and a connection is closed between its
 * limit and a quarter of it later.
 */

export interface IdleLimits {
  /** Before the connection's first message (0: no limit). */
  firstMessageMs: number;
  /** After it (0: no limit). */
  idleMs: number;
}

/**
 * Calls `check(now)` periodically while any limit is set; `check` closes what is overdue.
 * Returns the function that stops it.
 */
export function startIdleSweep(limits: IdleLimits, check: (now: number) => void): () => void {
  const set = [limits.firstMessageMs, limits.idleMs].filter((ms) => ms > 0);
  if (set.length === 0) return () => {};
  const every = Math.min(5000, Math.max(25, Math.floor(Math.min(...set) / 4)));
  const timer = setInterval(() => check(Date.now()), every);
  timer.unref?.();
  return () => clearInterval(timer);
}
