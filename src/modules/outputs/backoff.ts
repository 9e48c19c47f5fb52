/** Retry delays: doubling from `minMs`, capped at `maxMs`, with jitter so outputs that failed together do not retry together. */
export interface RetryPolicy {
  minMs: number;
  maxMs: number;
  /** Attempts per batch before it is dropped; 0: never. */
  maxAttempts: number;
}

/** The wait after failed attempt number `attempt` (1-based); `random` in [0, 1). */
export function backoffMs(attempt: number, p: Pick<RetryPolicy, "minMs" | "maxMs">, random = Math.random()): number {
  const base = Math.min(p.maxMs, p.minMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(base / 2 + (random * base) / 2);
}
