/**
 * Shared bench plumbing: spawning Core as its own process, running wrk, printing tables.
 * Figures are always reported next to a baseline measured in the same run, as a ratio,
 * because these machines are shared and noisy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..");
export const BUN = process.execPath;

export function benchDir(): string {
  return mkdtempSync(join(tmpdir(), "honeybee-bench-"));
}

/** Starts `honeybee core` with ports 0; resolves with its ports once it logs "core started". */
export async function spawnCore(args: string[] = [], env: Record<string, string> = {}) {
  const dir = benchDir();
  const proc = Bun.spawn(
    [BUN, join(ROOT, "src/main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", join(dir, "core.db"), "--log-level", "info", ...args],
    { stdout: "pipe", stderr: "inherit", env: { ...process.env, ...env } },
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

/** Runs wrk against a URL; returns requests per second. */
export async function wrk(url: string, seconds: number, connections = 32): Promise<number> {
  const proc = Bun.spawn(["wrk", "-t", "1", "-c", String(connections), "-d", `${seconds}s`, url], { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(proc.stdout).text();
  await proc.exited;
  const m = out.match(/Requests\/sec:\s+([\d.]+)/);
  if (!m) throw new Error(`wrk printed no rate: ${out}`);
  // A rate of error answers (429s, 500s) would measure the wrong thing.
  if (/Non-2xx or 3xx responses/.test(out)) throw new Error(`wrk saw error responses from ${url}: ${out}`);
  return Number(m[1]);
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
    { stdout: Bun.file(logPath), stderr: "inherit", env: { ...process.env, ...env } },
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
