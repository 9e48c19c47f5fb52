import { join } from "node:path";
import { parseWithIds } from "../../src/protocol/json";
import { BUN, ROOT } from "../helpers";

export const MAIN = join(ROOT, "src", "main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed with exact node ids, when it is JSON. */
  json: any;
}

/** Runs `honeybee ARGS` as a real process against a Core (its REST and WebSocket addresses). */
export async function cli(args: string[], core?: { api: string; ws: string }, env: Record<string, string> = {}): Promise<CliResult> {
  const proc = Bun.spawn([BUN, MAIN, ...args], {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    env: { ...process.env, ...(core ? { HONEYBEE_API: core.api, HONEYBEE_WS: core.ws } : {}), ...env },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  let json: any;
  try {
    json = parseWithIds(stdout);
  } catch {}
  return { code, stdout, stderr, json };
}

/** A spawned long-running command whose output lines are awaited, never slept on. */
export class LiveProcess {
  private out = "";
  private err = "";
  private waiters: { match: (text: string) => boolean; resolve: () => void; stream: "out" | "err" }[] = [];
  readonly proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  /** Resolves when both output streams have ended. */
  private readonly drained: Promise<unknown>;

  constructor(argv: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
    this.proc = Bun.spawn(argv, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.drained = Promise.all([this.pump(this.proc.stdout, "out"), this.pump(this.proc.stderr, "err")]);
  }

  private async pump(stream: ReadableStream<Uint8Array>, which: "out" | "err") {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      if (which === "out") this.out += decoder.decode(chunk, { stream: true });
      else this.err += decoder.decode(chunk, { stream: true });
      this.waiters = this.waiters.filter((w) => (w.match(w.stream === "out" ? this.out : this.err) ? (w.resolve(), false) : true));
    }
  }

  get stdout(): string {
    return this.out;
  }

  get stderr(): string {
    return this.err;
  }

  /** Waits until stdout (or stderr) contains `text`; fails with both streams if the process exits first. */
  async waitFor(text: string | RegExp, stream: "out" | "err" = "out"): Promise<string> {
    const match = (s: string) => (typeof text === "string" ? s.includes(text) : text.test(s));
    const done = Promise.withResolvers<void>();
    if (match(stream === "out" ? this.out : this.err)) done.resolve();
    else this.waiters.push({ match, resolve: done.resolve, stream });
    const exited = this.proc.exited.then(async (code) => {
      await this.drained;
      if (!match(stream === "out" ? this.out : this.err)) throw new Error(`process exited (${code}) before printing ${text}\nstdout:\n${this.out}\nstderr:\n${this.err}`);
    });
    await Promise.race([done.promise, exited]);
    return stream === "out" ? this.out : this.err;
  }

  async stop(signal: NodeJS.Signals = "SIGINT"): Promise<number> {
    this.proc.kill(signal);
    return this.proc.exited;
  }

  async [Symbol.asyncDispose]() {
    if (this.proc.exitCode === null) await this.stop("SIGTERM");
  }
}
