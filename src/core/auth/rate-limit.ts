/**
 * Per-key token buckets (key: a client address). Memory is bounded: the map is swept of full
 * buckets when it grows, so a scan from many addresses cannot grow it without limit.
 */
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>();
  private readonly perMs: number;
  limited = 0;

  /** `perMinute` 0 disables the limit. */
  constructor(
    private readonly perMinute: number,
    private readonly burst = Math.max(1, Math.ceil(perMinute / 6)),
    private readonly maxKeys = 50_000,
  ) {
    this.perMs = perMinute / 60_000;
  }

  get enabled(): boolean {
    return this.perMinute > 0;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait. */
  take(key: string, now = Date.now()): number {
    if (!this.enabled) return 0;
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.sweep(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + (now - b.at) * this.perMs);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    this.limited++;
    return Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000));
  }

  /** True while a key has no token left, without taking one. */
  blocked(key: string, now = Date.now()): boolean {
    const b = this.buckets.get(key);
    if (!b || !this.enabled) return false;
    return Math.min(this.burst, b.tokens + (now - b.at) * this.perMs) < 1;
  }

  private sweep(now: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (now - b.at) * this.perMs >= this.burst) this.buckets.delete(k);
    if (this.buckets.size >= this.maxKeys) this.buckets.clear();
  }
}

/** Counts open connections per address, for listeners that cap them. */
export class ConnectionCounter {
  private open = new Map<string, number>();
  refused = 0;

  constructor(private readonly maxPerAddress: number) {}

  /** Returns false (and counts a refusal) when the address is at its limit. */
  acquire(address: string): boolean {
    const n = this.open.get(address) ?? 0;
    if (this.maxPerAddress > 0 && n >= this.maxPerAddress) {
      this.refused++;
      return false;
    }
    this.open.set(address, n + 1);
    return true;
  }

  release(address: string): void {
    const n = (this.open.get(address) ?? 1) - 1;
    if (n <= 0) this.open.delete(address);
    else this.open.set(address, n);
  }
}
