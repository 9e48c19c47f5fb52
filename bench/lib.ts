/**
 * Shared bench plumbing: spawning Core as its own process, running wrk, printing tables.
 * Figures are always reported next to a baseline measured in the same run, as a ratio,
 * because these machines are shared and noisy.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RUNTIME_ENV } from "../src/runtime-env";

export const ROOT = join(import.meta.dir, "..");
export const BUN = process.execPath;
/**
 * What Core sets for Bun when its environment does not (src/runtime-env.ts), for the baselines
 * that run without Core's code ((b+ alloc), the stall fixture) and for Core itself, which then
 * starts without starting again. A value in the bench's environment wins, as it does for Core.
 * BENCH_LAUNCHER_ENV=off passes none: Core starts as `bun src/main.ts core` does in a bare
 * environment (and sets them itself).
 */
export const LAUNCHER_ENV: Record<string, string> =
  process.env.BENCH_LAUNCHER_ENV === "off"
    ? {}
    : {
        MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? RUNTIME_ENV.MIMALLOC_PURGE_DELAY,
        BUN_JSC_forceRAMSize: process.env.BUN_JSC_forceRAMSize ?? RUNTIME_ENV.BUN_JSC_forceRAMSize,
      };

export function benchDir(): string {
  return mkdtempSync(join(tmpdir(), "honeybee-bench-"));
}

/** Starts `honeybee core` with ports 0; resolves with its ports once it logs "core started". */
export async function spawnCore(args: string[] = [], env: Record<string, string> = {}) {
  const dir = benchDir();
  const proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir, "core.db"), "--log-level", "info", ...args],
    { stdout: "pipe", stderr: "inherit", env: { ...process.env, ...LAUNCHER_ENV, ...env } },
  );
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`core exited before starting: ${text}`);
    text += new TextDecoder().decode(value);
    const line = text.split("\n").find((l) => l.includes('"core started"'));
    if (line) {
      // Keep draining stdout so Core never blocks on a full pipe.
      (async () => {
        for (;;) if ((await reader.read()).done) break;
      })();
      return { proc, dir, ports: JSON.parse(line).ports as { node: number; api: number; ws: number; event: number } };
    }
  }
}

export function hasWrk(): boolean {
  return Bun.which("wrk") !== null;
}

/** Runs wrk against a URL; returns requests per second and the number of requests answered. */
export async function wrkRun(url: string, seconds: number, connections = 32): Promise<{ rate: number; requests: number }> {
  const proc = Bun.spawn(["wrk", "-t", "1", "-c", String(connections), "-d", `${seconds}s`, url], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const m = out.match(/Requests\/sec:\s+([\d.]+)/);
  const n = out.match(/(\d+) requests in/);
  if (!m || !n) throw new Error(`wrk printed no rate: ${out}`);
  // A rate of error answers (429s, 500s) would measure the wrong thing.
  if (/Non-2xx or 3xx responses/.test(out)) throw new Error(`wrk saw error responses from ${url}: ${out}`);
  return { rate: Number(m[1]), requests: Number(n[1]) };
}

// Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ, fixed at 100 for userspace).
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. On a shared
 * machine this is far steadier than requests/s: other workers take wall time, not our CPU time.
 */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** wrk against a URL served by process `pid`: requests/s and that process's CPU µs per request. */
export async function wrkCpu(url: string, pid: number, seconds: number, connections = 32): Promise<{ rate: number; cpuUs: number }> {
  const before = cpuSeconds(pid);
  const { rate, requests } = await wrkRun(url, seconds, connections);
  return { rate, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / requests };
}

export function table(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (typeof c === "number" ? format(c) : c)))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => String(r[i]).length)));
  const line = (r: (string | number)[]) => "| " + r.map((c, i) => String(c).padEnd(widths[i]!)).join(" | ") + " |";
  return [line(cells[0]!), "|" + widths.map((w) => "-".repeat(w + 2)).join("|") + "|", ...cells.slice(1).map(line)].join("\n");
}

function format(n: number): string {
  if (Number.isInteger(n)) return n.toLocaleString("en-US");
  return n >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(2);
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Reads the first JSON line a child process prints on stdout. */
export async function firstJsonLine(proc: { stdout: ReadableStream<Uint8Array> }): Promise<any> {
  const reader = proc.stdout.getReader();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`process printed no JSON line: ${text}`);
    text += new TextDecoder().decode(value);
    const nl = text.indexOf("\n");
    if (nl >= 0) {
      reader.releaseLock();
      return JSON.parse(text.slice(0, nl));
    }
  }
}

/** Reads a child's stdout line by line: `next()` gives the next line, `rest()` all that is left. */
export function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    async next(): Promise<string> {
      for (;;) {
        const nl = text.indexOf("\n");
        if (nl >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          return line;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended: ${text}`);
        text += decoder.decode(value);
      }
    },
    async rest(): Promise<string> {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value);
      }
    },
  };
}

/**
 * Starts `honeybee core` on a given database with ports 0, its log going to `<db>.log` (a file,
 * as in production: a pipe would make the bench a second consumer of CPU). Resolves once it
 * logs "core started", with its ports and how long it took to start.
 */
export async function startCoreOn(dbPath: string, args: string[] = [], env: Record<string, string> = {}) {
  const logPath = dbPath + ".log";
  // A log left by an earlier Core on the same database would give its (stale) ports.
  rmSync(logPath, { force: true });
  const t = performance.now();
  const proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", dbPath, "--log-level", "info", ...args],
    { stdout: Bun.file(logPath), stderr: "inherit", env: { ...process.env, ...LAUNCHER_ENV, ...env } },
  );
  for (;;) {
    await Bun.sleep(20);
    const started = (await Bun.file(logPath).text()).split("\n").find((l) => l.includes('"core started"'));
    if (started) {
      const ports = JSON.parse(started).ports as { node: number; api: number; ws: number; event: number };
      return {
        proc,
        ports,
        startMs: performance.now() - t,
        async stop() {
          proc.kill("SIGTERM");
          await proc.exited;
        },
      };
    }
    if (proc.exitCode !== null) throw new Error(`core exited: ${await Bun.file(logPath).text()}`);
  }
}
