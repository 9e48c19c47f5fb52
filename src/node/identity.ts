/**
 * The node's identity and its claim on the data directory.
 *
 * The node_id is a random u64 (existing nodes pick ids above 2^53, and Core keeps them exact),
 * generated once and kept in `DATA/node_id`, so a restarted node is the same node to Core. A
 * corrupt file stops start-up instead of silently making a new identity: that would orphan
 * every pot Core knows under the old id.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config";
import { toU64 } from "../protocol/json";

export function loadOrCreateNodeId(dataDir: string): { nodeId: bigint; created: boolean } {
  const file = join(dataDir, "node_id");
  if (existsSync(file)) {
    const text = readFileSync(file, "utf8").trim();
    const id = toU64(text);
    if (id === null || id === 0n) throw new ConfigError(`${file} does not hold a node id (an unsigned 64-bit decimal integer): ${JSON.stringify(text.slice(0, 40))}; fix or delete it`);
    return { nodeId: id, created: false };
  }
  const nodeId = randomU64();
  writeFileAtomic(file, nodeId.toString() + "\n");
  return { nodeId, created: true };
}

export function randomU64(): bigint {
  const words = crypto.getRandomValues(new BigUint64Array(1));
  return words[0] === 0n ? 1n : words[0]!;
}

/** Write to a temporary file, then rename: a crash leaves the old file or the new, never half. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * Takes `DATA/node.lock` for this process. Two agents on one data directory would fight over
 * the same pots and spool; the second is refused with the first one's pid. A lock left by a
 * process that no longer exists (a node killed with SIGKILL, a power cut) is taken over, and so
 * is one whose pid now names another process: the lock records the process's start time too,
 * and a recycled pid has a different one.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "node.lock");
  const mine = `${process.pid} ${processStartTime(process.pid) ?? ""}`.trim();
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${mine}\n`);
      closeSync(fd);
      return {
        release: () => {
          try {
            if (readFileSync(file, "utf8").trim() === mine) unlinkSync(file);
          } catch {}
        },
      };
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
      const [pidText, started] = readFileSync(file, "utf8").trim().split(/\s+/);
      const pid = Number(pidText);
      if (pid === process.pid) throw new ConfigError(`data directory ${dataDir} is already used by a node agent in this process`);
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid) && (started === undefined || started === processStartTime(pid))) {
        throw new ConfigError(`data directory ${dataDir} is in use by another node agent (pid ${pid}); give each node its own --data`);
      }
      unlinkSync(file);
    }
  }
  throw new ConfigError(`could not lock data directory ${dataDir}`);
}

/** When a process started (clock ticks since boot, Linux /proc); null where unknown. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}
