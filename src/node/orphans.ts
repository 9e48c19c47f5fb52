/**
 * Honeypots left running by a node that died without stopping them (SIGKILL, OOM, power loss
 * of the node process alone). They still hold their ports, so the restarted node could not
 * bring them back. Their process group ids are in pots.json; a process is only taken for ours
 * if its working directory is still the pot's folder (Linux /proc), so a recycled pid of an
 * unrelated process is never touched.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { resolve } from "node:path";
import type { Logger } from "../log";
import { processAlive } from "./identity";
import { killGroup } from "./run-step";

export function isPotProcess(pid: number, potDir: string): boolean {
  try {
    return readlinkSync(`/proc/${pid}/cwd`) === resolve(potDir);
  } catch {
    return false;
  }
}

/** Alive and not a zombie (an orphan's new parent may be slow to reap it, or never do so). */
export function processRunning(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** Stops an orphaned pot process group: SIGTERM, then SIGKILL after `graceMs`. */
export async function reapOrphan(pid: number, potDir: string, graceMs: number, logger: Logger): Promise<boolean> {
  if (!processRunning(pid) || !isPotProcess(pid, potDir)) return false;
  logger.warn({ pid, pot_dir: potDir }, "found a honeypot left running by an earlier node process; stopping it");
  killGroup(pid, "SIGTERM");
  // Not our child: there is no exit event to wait on, so look again every few milliseconds.
  const deadline = Date.now() + graceMs;
  while (processRunning(pid) && Date.now() < deadline) await Bun.sleep(20);
  if (processRunning(pid)) killGroup(pid, "SIGKILL");
  while (processRunning(pid) && Date.now() < deadline + 2000) await Bun.sleep(20);
  return true;
}
