/**
 * Keeps each installed pot in the state it should be in, and says so.
 *
 * Every transition is reported through `onStatus` (Running, Stopped, Failed; Installing comes
 * from the install path). A pot that exits while it should run becomes Failed with the tail of
 * its stderr and is started again after a capped, jittered backoff; the backoff resets once a
 * run lasted longer than its cap. Operations on one pot run one at a time, so a StopPot that
 * arrives while a restart is due never races it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseManifest } from "../catalogue/loader";
import type { Manifest } from "../catalogue/manifest";
import type { Logger } from "../log";
import { Backoff } from "./backoff";
import { writeConfigFile } from "./install-run";
import { portProblem } from "./port-check";
import type { PotStore } from "./pot-store";
import { potDir, potRuntime, type NodeContext } from "./pot-runtime";
import { spawnPot, type ExitInfo, type PotProcess } from "./pot-process";
import { formatMs } from "./run-step";

export type PotStatus = "Installing" | "Running" | "Stopped" | "Failed";

export interface SupervisorOptions {
  store: PotStore;
  ctx: NodeContext;
  logsDir: string;
  startTimeoutMs: number;
  stopGraceMs: number;
  restartMinMs: number;
  restartMaxMs: number;
  logger: Logger;
  onStatus(potId: string, potType: string, status: PotStatus, message: string): void;
}

export interface OpResult {
  ok: boolean;
  message: string;
  /** The answer of a query command, sent as CommandResult.data. */
  data?: unknown;
}

interface Supervised {
  status: PotStatus;
  message: string;
  proc: PotProcess | null;
  startedAt: number;
  stopping: boolean;
  backoff: Backoff;
  restartTimer: ReturnType<typeof setTimeout> | null;
  /** Automatic restarts after unexpected exits, since the node started (GetPotMetrics). */
  restarts: number;
  queue: Promise<unknown>;
}

export function logFiles(logsDir: string, potId: string) {
  const dir = join(logsDir, potId);
  return { install: join(dir, "install.log"), stdout: join(dir, "stdout.log"), stderr: join(dir, "stderr.log") };
}

export function readPotManifest(dir: string): Manifest | string {
  const file = join(dir, "manifest.json");
  if (!existsSync(file)) return `${file} is missing`;
  return parseManifest(readFileSync(file, "utf8"));
}

export class Supervisor {
  private pots = new Map<string, Supervised>();
  private closing = false;
  private waiters: { potId: string; status: PotStatus; resolve: () => void }[] = [];

  constructor(private readonly opts: SupervisorOptions) {}

  /** Current status of a pot being installed or installed (one never started is Stopped). */
  status(potId: string): { status: PotStatus; message: string; pid: number | null } | null {
    const p = this.pots.get(potId) ?? (this.opts.store.get(potId) ? this.entry(potId) : null);
    return p ? { status: p.status, message: p.message, pid: p.proc?.pid ?? null } : null;
  }

  /** The running process of a pot, for GetPotMetrics: its pid (a process group), start time and restarts. */
  process(potId: string): { pid: number | null; startedAt: number | null; restarts: number } {
    const p = this.pots.get(potId);
    return { pid: p?.proc?.pid ?? null, startedAt: p?.proc ? p.startedAt : null, restarts: p?.restarts ?? 0 };
  }

  /** Sets a status from outside the supervisor (install progress, install failure). */
  report(potId: string, potType: string, status: PotStatus, message: string): void {
    const p = this.entry(potId);
    p.status = status;
    p.message = message;
    this.opts.onStatus(potId, potType, status, message);
    if (this.waiters.length) this.waiters = this.waiters.filter((w) => (w.potId === potId && w.status === status ? (w.resolve(), false) : true));
  }

  /** Resolves when the pot is (or next becomes) `status`: for embedders and tests. */
  reached(potId: string, status: PotStatus): Promise<void> {
    if (this.pots.get(potId)?.status === status) return Promise.resolve();
    const { promise, resolve } = Promise.withResolvers<void>();
    this.waiters.push({ potId, status, resolve });
    return promise;
  }

  forget(potId: string): void {
    const p = this.pots.get(potId);
    if (p?.restartTimer) clearTimeout(p.restartTimer);
    this.pots.delete(potId);
  }

  start(potId: string): Promise<OpResult> {
    this.opts.store.update(potId, { desired: "running" });
    return this.serial(potId, () => this.launch(potId));
  }

  stop(potId: string): Promise<OpResult> {
    this.opts.store.update(potId, { desired: "stopped" });
    return this.serial(potId, () => this.halt(potId, "stopped"));
  }

  restart(potId: string): Promise<OpResult> {
    this.opts.store.update(potId, { desired: "running" });
    return this.serial(potId, async () => {
      await this.halt(potId, "restarting");
      return this.launch(potId);
    });
  }

  /** Node shutdown: stop every process, keep each pot's desired state for the next start. */
  async stopAll(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.pots.keys()].map((id) => this.serial(id, () => this.halt(id, "stopped with the node"))));
  }

  private entry(potId: string): Supervised {
    let p = this.pots.get(potId);
    if (!p) {
      p = { status: "Stopped", message: "", proc: null, startedAt: 0, stopping: false, backoff: new Backoff(this.opts.restartMinMs, this.opts.restartMaxMs), restartTimer: null, restarts: 0, queue: Promise.resolve() };
      this.pots.set(potId, p);
    }
    return p;
  }

  private serial<T>(potId: string, op: () => Promise<T>): Promise<T> {
    const p = this.entry(potId);
    const next = p.queue.then(op, op);
    p.queue = next.catch(() => {});
    return next;
  }

  private set(potId: string, status: PotStatus, message: string): void {
    const record = this.opts.store.get(potId);
    this.report(potId, record?.pot_type ?? "unknown", status, message);
  }

  private async launch(potId: string): Promise<OpResult> {
    const p = this.entry(potId);
    if (p.restartTimer) clearTimeout(p.restartTimer);
    p.restartTimer = null;
    if (p.proc) return { ok: true, message: `${potId} is already running (pid ${p.proc.pid})` };
    const record = this.opts.store.get(potId);
    if (!record) return { ok: false, message: `${potId} is not installed` };
    if (this.closing) return { ok: false, message: "the node is shutting down" };

    const fail = (message: string, retry: boolean): OpResult => {
      this.set(potId, "Failed", retry ? this.scheduleRestart(potId, message) : message);
      return { ok: false, message };
    };
    const dir = potDir(this.opts.ctx, potId);
    const manifest = readPotManifest(dir);
    if (typeof manifest === "string") return fail(`cannot start ${potId}: ${manifest}`, false);
    const runtime = potRuntime(manifest, potId, record.config, this.opts.ctx);
    if (!runtime.ok) return fail(`cannot start ${potId}: ${runtime.message}`, false);
    for (const { key, port } of runtime.value.ports) {
      const problem = portProblem(port);
      if (problem) return fail(`cannot start ${potId}: port ${port} (${key}) ${problem}`, true);
    }
    const logs = logFiles(this.opts.logsDir, potId);
    let proc: PotProcess;
    try {
      writeConfigFile(runtime.value.configPath, runtime.value.configFile);
      proc = spawnPot({ argv: runtime.value.argv, cwd: dir, env: runtime.value.env, stdoutLog: logs.stdout, stderrLog: logs.stderr, startTimeoutMs: this.opts.startTimeoutMs, logger: this.opts.logger });
    } catch (e) {
      return fail(`cannot start ${potId} (${runtime.value.argv.join(" ")}): ${(e as Error).message}`, false);
    }
    p.proc = proc;
    p.stopping = false;
    p.startedAt = Date.now();
    this.opts.store.update(potId, { pid: proc.pid });
    this.opts.logger.info({ pot_id: potId, pid: proc.pid }, "honeypot process started");
    const exitHandled = proc.exited.then((info) => this.onExit(potId, proc, info));

    const outcome = await proc.started;
    if (outcome.how === "exited") {
      await exitHandled;
      return { ok: false, message: this.entry(potId).message };
    }
    const message =
      outcome.how === "ready"
        ? `running (pid ${proc.pid})${outcome.ports ? `, listening on ${describePorts(outcome.ports)}` : ""}`
        : `running (pid ${proc.pid}); no ready line within ${formatMs(this.opts.startTimeoutMs)}, but the process is alive`;
    this.set(potId, "Running", message);
    return { ok: true, message };
  }

  private async halt(potId: string, why: string): Promise<OpResult> {
    const p = this.entry(potId);
    if (p.restartTimer) clearTimeout(p.restartTimer);
    p.restartTimer = null;
    const proc = p.proc;
    if (!proc) {
      if (p.status !== "Stopped" && p.status !== "Installing") this.set(potId, "Stopped", why);
      return { ok: true, message: `${potId} is not running` };
    }
    p.stopping = true;
    const info = await proc.stop(this.opts.stopGraceMs);
    this.set(potId, "Stopped", why);
    return { ok: true, message: `${potId} stopped (${describeExit(info)})` };
  }

  private onExit(potId: string, proc: PotProcess, info: ExitInfo): void {
    const p = this.pots.get(potId);
    if (!p || p.proc !== proc) return;
    p.proc = null;
    this.opts.store.update(potId, { pid: null });
    if (p.stopping) return;
    if (Date.now() - p.startedAt >= this.opts.restartMaxMs) p.backoff.reset();
    const message = `${potId} exited unexpectedly (${describeExit(info)})${info.stderrTail ? `: ${info.stderrTail}` : ""}`;
    this.opts.logger.warn({ pot_id: potId, code: info.code, signal: info.signal }, "honeypot exited unexpectedly");
    this.set(potId, "Failed", this.opts.store.get(potId)?.desired === "running" ? this.scheduleRestart(potId, message) : message);
  }

  /** Plans the next start of a pot that should run; returns the message with the plan in it. */
  private scheduleRestart(potId: string, message: string): string {
    const p = this.entry(potId);
    if (this.closing || this.opts.store.get(potId)?.desired !== "running") return message;
    const delay = p.backoff.next();
    if (p.restartTimer) clearTimeout(p.restartTimer);
    p.restartTimer = setTimeout(() => {
      p.restartTimer = null;
      p.restarts++;
      void this.serial(potId, () => this.launch(potId));
    }, delay);
    return `${message}; restarting in ${formatMs(delay)} (attempt ${p.backoff.attempts})`;
  }
}

function describeExit(info: ExitInfo): string {
  return info.signal ? `signal ${info.signal}` : `exit code ${info.code}`;
}

function describePorts(ports: Record<string, unknown>): string {
  return Object.entries(ports)
    .map(([k, v]) => `${k} ${v}`)
    .join(", ");
}
