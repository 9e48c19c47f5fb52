/**
 * Retention: every minute (and once at start), events older than `retention_days` are
 * deleted through the writer, one small chunk per request, so that batches queued meanwhile
 * are written in between and retention never holds the write lock for long.
 */
import type { Logger } from "../../log";
import type { RateLimitedLog } from "../../net/rate-limited-log";
import type { WriterChannel } from "../../db/writer-channel";

const RETENTION_EVERY_MS = 60_000;
const RETENTION_CHUNK = 2000;
const DAY_MS = 86_400_000;

export class RetentionSweep {
  private readonly timer: ReturnType<typeof setInterval>;
  private running = false;
  private stopped = false;

  constructor(
    private readonly days: number,
    private readonly writer: Pick<WriterChannel, "retentionStep">,
    private readonly log: Logger,
    private readonly warn: RateLimitedLog,
    /** Called after each chunk deleted (the stored events changed). */
    private readonly onDeleted: () => void,
  ) {
    this.timer = setInterval(() => this.run(), RETENTION_EVERY_MS);
    this.timer.unref?.();
    queueMicrotask(() => this.run());
  }

  /** No sweep starts after this, and a running one ends after its current chunk. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private async run(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    let total = 0;
    try {
      const cutoff = Date.now() - this.days * DAY_MS;
      for (;;) {
        if (this.stopped) break;
        const n = await this.writer.retentionStep(cutoff, RETENTION_CHUNK);
        if (n === 0) break;
        total += n;
        this.onDeleted();
      }
      if (total > 0) this.log.info({ deleted: total, retention_days: this.days }, "deleted events older than the retention period");
    } catch (e) {
      this.warn.warn("retention-failed", { err: (e as Error).message }, "deleting old events failed; trying again later");
    } finally {
      this.running = false;
    }
  }
}
