/**
 * File output: NDJSON in Elastic Common Schema names, one line per event, for Filebeat, Vector
 * or Fluent Bit to tail. Rotated like logrotate's `dateext`: the full file is renamed to
 * `<name>-<UTC time>.<ext>` and a new one begun, which all three shippers follow. A batch is
 * delivered once written (and fsynced with `fsync`): at least once, the batch in progress
 * when Core crashed may be written again.
 */
import { closeSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { stringify } from "../../protocol/json";
import { toEcs } from "./format/ecs";
import type { FileOutput } from "./model";
import type { Sink } from "./sink";

/** The rotated name of `path` at time `at`: `events.ndjson` -> `events-20261123T040102123Z.ndjson`. */
export function rotatedName(path: string, at: number): string {
  const ext = extname(path);
  const stamp = new Date(at).toISOString().replace(/[-:.]/g, "");
  return join(dirname(path), `${basename(path, ext)}-${stamp}${ext}`);
}

/** Rotated files of `path`, oldest first (their names sort by time). */
export function rotatedFiles(path: string): string[] {
  const ext = extname(path);
  const stem = basename(path, ext);
  const re = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-\\d{8}T\\d{9}Z${ext.replace(/\./g, "\\.")}$`);
  let names: string[] = [];
  try {
    names = readdirSync(dirname(path)).filter((n) => re.test(n));
  } catch {}
  return names.sort().map((n) => join(dirname(path), n));
}

export function fileSink(def: FileOutput, now: () => number = Date.now): Sink {
  const maxBytes = def.max_bytes ?? 100 * 1024 * 1024;
  const maxAge = def.max_age_ms ?? 86_400_000;
  let fd: number | null = null;
  let size = 0;
  let openedAt = 0;

  const open = () => {
    mkdirSync(dirname(def.path), { recursive: true });
    fd = openSync(def.path, "a", 0o640);
    const st = fstatSync(fd);
    size = st.size;
    // A file carried over from before a restart is as old as its first line, roughly its birth.
    openedAt = size === 0 ? now() : Math.min(now(), st.birthtimeMs || st.mtimeMs);
  };
  const rotate = () => {
    if (fd !== null) closeSync(fd);
    fd = null;
    let at = now();
    let target = rotatedName(def.path, at);
    // Two rotations within one millisecond must not overwrite each other.
    while (exists(target)) target = rotatedName(def.path, ++at);
    renameSync(def.path, target);
    const old = rotatedFiles(def.path);
    for (const f of old.slice(0, Math.max(0, old.length - (def.max_files ?? 10)))) unlinkSync(f);
    open();
  };

  return {
    async send(events) {
      if (fd === null) open();
      for (const e of events) {
        const line = Buffer.from(`${stringify(toEcs(e))}\n`);
        if (size > 0 && (size + line.length > maxBytes || now() - openedAt >= maxAge)) rotate();
        let off = 0;
        while (off < line.length) off += writeSync(fd!, line, off);
        size += line.length;
      }
      if (def.fsync) fsyncSync(fd!);
    },
    async close() {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}
