/**
 * What GetPotLogs and GetPotMetrics read about a pot: the tail of its log files and the CPU
 * and memory of its process group, from /proc (Linux; elsewhere the figures are null).
 */
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";

/** Bytes read from the end of a log file: enough for the lines asked, bounded for huge lines. */
const TAIL_BYTES = 64 * 1024;

/**
 * The last `lines` lines of a file, oldest first, each cut to `maxChars`; [] when the file does
 * not exist. Bounded so that a CommandResult stays well below the message size limit.
 */
export function tailLines(file: string, lines: number, maxChars: number): string[] {
  if (!existsSync(file)) return [];
  const fd = openSync(file, "r");
  try {
    const size = fstatSync(fd).size;
    const start = Math.max(0, size - TAIL_BYTES);
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    let text = buf.toString("utf8");
    // A read that starts mid-file starts mid-line: that partial line is not shown.
    if (start > 0) text = text.slice(text.indexOf("\n") + 1);
    const all = text.split("\n");
    if (all[all.length - 1] === "") all.pop();
    return all.slice(-lines).map((l) => (l.length > maxChars ? `${l.slice(0, maxChars)}…` : l));
  } finally {
    closeSync(fd);
  }
}

export interface GroupUsage {
  cpu_seconds: number;
  rss_bytes: number;
  processes: number;
}

/** Linux reports CPU times in clock ticks of USER_HZ, which is 100 on every architecture's ABI. */
const TICKS_PER_SECOND = 100;

/** CPU time and resident memory of every process in a process group, or null without /proc. */
export function groupUsage(pgid: number, proc = "/proc"): GroupUsage | null {
  let entries: string[];
  try {
    entries = readdirSync(proc);
  } catch {
    return null;
  }
  const usage: GroupUsage = { cpu_seconds: 0, rss_bytes: 0, processes: 0 };
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`${proc}/${name}/stat`, "utf8");
      // The command name in parentheses may hold spaces and parentheses: fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) !== pgid) continue;
      const rss = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`${proc}/${name}/status`, "utf8"));
      usage.processes++;
      usage.cpu_seconds += (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
      if (rss) usage.rss_bytes += Number(rss[1]) * 1024;
    } catch {
      // exited while we looked
    }
  }
  return usage.processes > 0 ? usage : null;
}
