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
 * process that no longer exists is taken over.
 */
export function lockDataDir(dataDir: string): { release(): void } {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, "node.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return {
        release: () => {
          try {
            if (readFileSync(file, "utf8").trim() === String(process.pid)) unlinkSync(file);
          } catch {}
        },
      };
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
      const pid = Number(readFileSync(file, "utf8").trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw new ConfigError(`data directory ${dataDir} is in use by another node agent (pid ${pid}); give each node its own --data`);
      }
      if (pid === process.pid) throw new ConfigError(`data directory ${dataDir} is already used by a node agent in this process`);
      unlinkSync(file);
    }
  }
  throw new ConfigError(`could not lock data directory ${dataDir}`);
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
}
