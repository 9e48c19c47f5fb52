/**
 * Capped exponential backoff with jitter. The jitter keeps a fleet of nodes that lost Core at
 * the same moment from reconnecting in lock-step when it comes back.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The next delay: min * 2^n capped at max, then a uniform pick from its upper half. */
  next(): number {
    const ceiling = Math.min(this.maxMs, this.minMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}
