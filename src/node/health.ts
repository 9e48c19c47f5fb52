/**
 * The node's own figures for its heartbeats (NodeStatusUpdate `health`, docs/protocol.md):
 * agent version and uptime, the host's CPU, memory and the disk of the data directory. Read
 * from `os` and /proc at each heartbeat; cheap (a few small files), and a figure that cannot be
 * read is left out rather than guessed.
 */
import { readFileSync, statfsSync } from "node:fs";
import { cpus, freemem, loadavg, totalmem, uptime } from "node:os";
import pkg from "../../package.json" with { type: "json" };
import type { NodeHealth } from "../protocol/messages";

/** Idle and total CPU time of every CPU of the host, in milliseconds. */
function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

/** Linux's MemAvailable (what programs can still get without swapping); os.freemem() elsewhere. */
function availableMemory(meminfo = "/proc/meminfo"): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync(meminfo, "utf8"));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  return freemem();
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** A reader of the figures; its CPU use is measured from one call to the next (the first call leaves it out). */
export function healthReader(dataDir: string): () => NodeHealth {
  let last = cpuTimes();
  let lastAt = 0;
  return () => {
    const now = cpuTimes();
    const health: NodeHealth = {
      agent_version: pkg.version,
      uptime_s: round(process.uptime()),
      host_uptime_s: Math.round(uptime()),
      cpus: cpus().length,
      load_1m: round(loadavg()[0] ?? 0, 2),
      mem_total_bytes: totalmem(),
      mem_available_bytes: availableMemory(),
      agent_rss_bytes: process.memoryUsage.rss(),
    };
    const total = now.total - last.total;
    if (lastAt > 0 && total > 0) health.cpu_percent = round(Math.min(100, Math.max(0, (100 * (total - (now.idle - last.idle))) / total)));
    last = now;
    lastAt = Date.now();
    try {
      const fs = statfsSync(dataDir);
      health.disk_total_bytes = fs.blocks * fs.bsize;
      health.disk_free_bytes = fs.bavail * fs.bsize;
    } catch {
      // the data directory is gone or statfs is not supported: no disk figures
    }
    return health;
  };
}
