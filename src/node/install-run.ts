/**
 * The effects of an install: copy the kind's folder into the pot's folder, write its config
 * file, run its install steps in order. Returns the reason on the first failure; the caller
 * removes the half-installed folder (the install log is kept outside it, for the operator).
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import type { InstallPlan } from "./installer";
import { closeLog, openLog } from "./output";
import { portProblem } from "./port-check";
import { runStep, type StepResult } from "./run-step";

export async function runInstall(plan: InstallPlan, opts: { logFile: string; stepTimeoutMs: number; signal?: AbortSignal }): Promise<StepResult> {
  const { runtime } = plan;
  for (const { key, port } of runtime.ports) {
    const problem = portProblem(port);
    if (problem) return { ok: false, message: `port ${port} (${key}) ${problem}` };
  }
  note(opts.logFile, `# ${new Date().toISOString()} installing ${plan.kind.manifest.name} from ${plan.kind.dir}\n`);
  try {
    mkdirSync(runtime.dir, { recursive: true });
    // A clone's .git would only waste space; the pot is a copy, not a working tree.
    cpSync(plan.kind.dir, runtime.dir, { recursive: true, filter: (src) => basename(src) !== ".git" });
    writeConfigFile(runtime.configPath, runtime.configFile);
  } catch (e) {
    return { ok: false, message: `cannot copy the honeypot into ${runtime.dir}: ${(e as Error).message}` };
  }
  for (const [i, step] of runtime.steps.entries()) {
    note(opts.logFile, `$ ${step.join(" ")}\n`);
    if (opts.signal?.aborted) return { ok: false, message: "the node is shutting down" };
    const r = await runStep(step, { cwd: runtime.dir, env: runtime.env, timeoutMs: opts.stepTimeoutMs, logFile: opts.logFile, signal: opts.signal });
    if (!r.ok) return { ok: false, message: `install step ${i + 1} of ${runtime.steps.length} failed: ${r.message}` };
  }
  note(opts.logFile, `# installed\n`);
  return { ok: true };
}

export function writeConfigFile(path: string, config: Record<string, string>): void {
  writeFileSync(path, JSON.stringify(config, null, 2) + "\n");
}

function note(logFile: string, text: string): void {
  const fd = openLog(logFile);
  try {
    writeFileSync(fd, text);
  } finally {
    closeLog(fd);
  }
}
