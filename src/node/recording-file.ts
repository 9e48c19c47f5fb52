/**
 * Finds and reads the recording a `cowrie.log.closed` names, as the asciicast Core keeps.
 *
 * The path comes from an event, which a honeypot under attack writes: it is followed only to a
 * file inside the pot's folder (symbolic links resolved first, so none leads out), and only so
 * many bytes are read. The built-in cowrie's asciicast is sent as it is; real Cowrie's binary
 * tty log is converted (cowrie-ttylog.ts). Which one a file is, its first bytes say.
 */
import { closeSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { MAX_RECORDING_BYTES } from "../protocol/messages";
import { recordingFormat, TtylogError, ttylogToCast } from "./cowrie-ttylog";

/**
 * Bytes of a tty log read at most. Its data bytes all go into the cast (JSON-escaped, so no
 * fewer), so the cast of this much is over MAX_RECORDING_BYTES unless most of it is record
 * headers or interact writes: what lies beyond is left out, as the cast's own limit would.
 */
export const MAX_TTYLOG_READ_BYTES = 4 * MAX_RECORDING_BYTES;

export type RecordingFile = { data: Buffer; from: "asciicast" | "ttylog"; truncated: boolean } | { reason: string };

export function readRecording(potDir: string, ttylog: string): RecordingFile {
  let dir: string;
  let real: string;
  try {
    dir = realpathSync(potDir);
  } catch {
    return { reason: `the pot's folder ${potDir} does not exist` };
  }
  try {
    real = realpathSync(resolve(dir, ttylog));
  } catch {
    return { reason: "the file does not exist" };
  }
  const rel = relative(dir, real);
  if (rel === "" || rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return { reason: "the file is outside the pot's folder" };
  const st = statSync(real);
  if (!st.isFile()) return { reason: "not a file" };
  if (st.size === 0) return { reason: "the file is empty" };
  const data = readAtMost(real, Math.min(st.size, MAX_TTYLOG_READ_BYTES));
  const format = recordingFormat(data);
  if (format === "asciicast") {
    if (st.size > MAX_RECORDING_BYTES) return { reason: `its size ${st.size} is over ${MAX_RECORDING_BYTES} bytes` };
    return { data, from: "asciicast", truncated: false };
  }
  if (format === null) return { reason: "it is neither asciicast nor a Cowrie tty log" };
  try {
    const r = ttylogToCast(data, { maxBytes: MAX_RECORDING_BYTES, partial: st.size > data.length });
    return { data: r.cast, from: "ttylog", truncated: r.truncated };
  } catch (e) {
    if (e instanceof TtylogError) return { reason: `the Cowrie tty log is ${e.message}` };
    throw e;
  }
}

function readAtMost(path: string, n: number): Buffer {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(n);
    let got = 0;
    while (got < n) {
      const r = readSync(fd, buf, got, n - got, got);
      if (r === 0) break;
      got += r;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}
