/**
 * Outputs and alert rules across the instances of a cluster (docs/scale-out.md). A commit by
 * any instance's writer wakes every instance's readers (the pipeline's own commit signal only
 * fires for this instance's writes, and in a cluster not even then: its batches are committed
 * by whichever writer pulls them). A definition added or removed over REST on one instance
 * makes the others read the definitions again, so every instance lists and runs it.
 *
 * Both are plain NATS messages, which a reconnect may lose: readers poll anyway
 * (outputs/reader.ts, IDLE_POLL_MS), and definitions are read again every RELOAD_EVERY_MS.
 */
import type { Logger } from "../log";
import type { Bus } from "./connect";

const RELOAD_EVERY_MS = 30_000;

export interface ReaderSyncTarget {
  /** Events up to this id are committed. */
  committed(lastId: number): void;
  /** Read the definitions again. */
  reload(): Promise<void>;
}

export interface ReaderSync {
  /** This instance changed a definition: tell the others. */
  changed(): void;
  stop(): void;
}

export function syncReaders(bus: Pick<Bus, "nc" | "names">, target: ReaderSyncTarget, logger: Logger): ReaderSync {
  const { nc, names } = bus;
  const reload = () =>
    target.reload().catch((e) => logger.warn({ err: (e as Error).message }, "cannot read the outputs' and rules' definitions; trying again later"));
  const commits = nc.subscribe(names.committed, {
    callback: (err, m) => {
      if (err) return;
      const id = Number(m.string());
      if (Number.isSafeInteger(id)) target.committed(id);
    },
  });
  const changes = nc.subscribe(names.readersChanged, {
    callback: (err) => {
      if (!err) void reload();
    },
  });
  const timer = setInterval(reload, RELOAD_EVERY_MS);
  return {
    changed: () => {
      if (!nc.isClosed()) nc.publish(names.readersChanged);
    },
    stop: () => {
      clearInterval(timer);
      commits.unsubscribe();
      changes.unsubscribe();
    },
  };
}
