/**
 * adb's file sync protocol, spoken on a `sync:` stream (file_sync_protocol.h): requests of a
 * 4-letter id, a 32-bit little-endian length and a path; SEND is followed by DATA chunks (64 KiB
 * at most each) and a DONE carrying the file's mtime. Pure: bytes in, requests out, and the
 * encoders of adbd's answers.
 */
import { ByteQueue } from "./bytes.ts";

/** adbd's limits: longer paths and chunks end the stream with a FAIL. */
export const SYNC_PATH_MAX = 1024;
export const SYNC_DATA_MAX = 64 * 1024;

/** SND2's flags (sendrecv_v2): the compression the DATA chunks carry, and a dry run. */
export const SYNC_FLAG_BROTLI = 1;
export const SYNC_FLAG_LZ4 = 2;
export const SYNC_FLAG_ZSTD = 4;
export const SYNC_FLAG_DRY_RUN = 0x80000000;

/** Path requests adbd knows; anything else is answered "unknown command". */
const PATH_REQUESTS = new Set(["STAT", "STA2", "LST2", "LIST", "LIS2", "SEND", "SND2", "RECV", "RCV2", "QUIT"]);

export type SyncRequest =
  | { type: "request"; id: string; path: string }
  | { type: "send2"; path: string; mode: number; flags: number }
  | { type: "recv2"; path: string; flags: number }
  | { type: "data"; bytes: Buffer }
  | { type: "done"; mtime: number }
  /** The peer broke the protocol: adbd answers FAIL with this text and ends the stream. */
  | { type: "fail"; message: string };

type State = { kind: "request" } | { kind: "send2" | "recv2"; path: string } | { kind: "data" };

export class SyncDecoder {
  private readonly buffer = new ByteQueue();
  private state: State = { kind: "request" };
  private failed = false;

  push(chunk: Uint8Array): SyncRequest[] {
    if (this.failed) return [];
    this.buffer.push(chunk);
    const out: SyncRequest[] = [];
    for (;;) {
      const next = this.next();
      if (!next) break;
      out.push(next);
      if (next.type === "fail") {
        this.failed = true;
        this.buffer.clear();
        break;
      }
    }
    return out;
  }

  private take(n: number): Buffer {
    return this.buffer.take(n);
  }

  /** One request when its bytes are all here; the buffer never holds more than one DATA chunk. */
  private next(): SyncRequest | null {
    const state = this.state;
    if (state.kind === "send2" || state.kind === "recv2") {
      const size = state.kind === "send2" ? 12 : 8;
      if (this.buffer.length < size) return null;
      const setup = this.take(size);
      if (setup.toString("latin1", 0, 4) !== (state.kind === "send2" ? "SND2" : "RCV2")) return { type: "fail", message: "invalid setup packet" };
      if (state.kind === "send2") {
        this.state = { kind: "data" };
        return { type: "send2", path: state.path, mode: setup.readUInt32LE(4), flags: setup.readUInt32LE(8) };
      }
      this.state = { kind: "request" };
      return { type: "recv2", path: state.path, flags: setup.readUInt32LE(4) };
    }
    if (this.buffer.length < 8) return null;
    const head = this.buffer.peek(8);
    const id = head.toString("latin1", 0, 4);
    const length = head.readUInt32LE(4);
    if (state.kind === "data") {
      if (id === "DONE") {
        this.take(8);
        this.state = { kind: "request" };
        return { type: "done", mtime: length };
      }
      if (id !== "DATA") return { type: "fail", message: "invalid data message" };
      if (length > SYNC_DATA_MAX) return { type: "fail", message: "oversize data message" };
      if (this.buffer.length < 8 + length) return null;
      this.take(8);
      return { type: "data", bytes: this.take(length) };
    }
    if (length > SYNC_PATH_MAX) return { type: "fail", message: "path too long" };
    if (this.buffer.length < 8 + length) return null;
    this.take(8);
    const path = this.take(length).toString("utf8");
    if (!PATH_REQUESTS.has(id)) return { type: "fail", message: `unknown command ${Buffer.from(id, "latin1").readUInt32LE(0).toString(16).padStart(8, "0")}` };
    if (id === "SEND") this.state = { kind: "data" };
    else if (id === "SND2") this.state = { kind: "send2", path };
    else if (id === "RCV2") this.state = { kind: "recv2", path };
    else return { type: "request", id, path };
    return id === "SEND" ? { type: "request", id, path } : this.next();
  }
}

/** SEND's "path,mode": the mode in C's strtoul base 0 (decimal, 0-led octal or 0x hex). */
export function splitSendSpec(spec: string): { path: string; mode: number } | null {
  const comma = spec.lastIndexOf(",");
  if (comma === -1) return null;
  const text = spec.slice(comma + 1).trim();
  let mode: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) mode = Number.parseInt(text.slice(2), 16);
  else if (/^0[0-7]*$/.test(text)) mode = Number.parseInt(text, 8);
  else if (/^[1-9][0-9]*$/.test(text)) mode = Number(text);
  else return null;
  if (!Number.isSafeInteger(mode)) return null;
  return { path: spec.slice(0, comma), mode: mode >>> 0 };
}

/** What a stat says about one path; absent means "no such file". */
export interface SyncStat {
  mode: number;
  size: number;
  mtime: number;
  uid: number;
  gid: number;
  nlink: number;
  ino: number;
}

export const ENOENT = 2;
export const EACCES = 13;

export function okay(): Buffer {
  return header("OKAY", 0);
}

export function fail(message: string): Buffer {
  const text = Buffer.from(message, "utf8");
  return Buffer.concat([header("FAIL", text.length), text]);
}

function header(id: string, value: number): Buffer {
  const out = Buffer.alloc(8);
  out.write(id, 0, "latin1");
  out.writeUInt32LE(value >>> 0, 4);
  return out;
}

/** STAT (v1, lstat): a missing file is all zeros. */
export function statV1(st: SyncStat | null): Buffer {
  const out = Buffer.alloc(16);
  out.write("STAT", 0, "latin1");
  if (st) {
    out.writeUInt32LE(st.mode >>> 0, 4);
    out.writeUInt32LE(Math.min(st.size, 0xffffffff), 8);
    out.writeUInt32LE(st.mtime >>> 0, 12);
  }
  return out;
}

function statV2Fields(out: Buffer, at: number, st: SyncStat | null, error: number): void {
  out.writeUInt32LE(st ? 0 : error, at);
  if (!st) return;
  out.writeBigUInt64LE(0xfd00n, at + 4); // dev: dm-0, the /data partition
  out.writeBigUInt64LE(BigInt(st.ino), at + 12);
  out.writeUInt32LE(st.mode >>> 0, at + 20);
  out.writeUInt32LE(st.nlink, at + 24);
  out.writeUInt32LE(st.uid, at + 28);
  out.writeUInt32LE(st.gid, at + 32);
  out.writeBigUInt64LE(BigInt(st.size), at + 36);
  for (const offset of [44, 52, 60]) out.writeBigInt64LE(BigInt(st.mtime), at + offset);
}

/** STA2 / LST2: the whole struct stat, or `error` (an errno) and zeros. */
export function statV2(id: "STA2" | "LST2", st: SyncStat | null, error = ENOENT): Buffer {
  const out = Buffer.alloc(72);
  out.write(id, 0, "latin1");
  statV2Fields(out, 4, st, error);
  return out;
}

/** One LIST entry (DENT), or with `v2` one LIS2 entry (DNT2). */
export function dent(name: string, st: SyncStat, v2: boolean): Buffer {
  const bytes = Buffer.from(name, "utf8");
  if (!v2) {
    const out = Buffer.alloc(20 + bytes.length);
    out.write("DENT", 0, "latin1");
    out.writeUInt32LE(st.mode >>> 0, 4);
    out.writeUInt32LE(Math.min(st.size, 0xffffffff), 8);
    out.writeUInt32LE(st.mtime >>> 0, 12);
    out.writeUInt32LE(bytes.length, 16);
    out.set(bytes, 20);
    return out;
  }
  const out = Buffer.alloc(76 + bytes.length);
  out.write("DNT2", 0, "latin1");
  statV2Fields(out, 4, st, 0);
  out.writeUInt32LE(bytes.length, 72);
  out.set(bytes, 76);
  return out;
}

/** The end of a listing: a DONE the size of the entry header, all zeros. */
export function dentDone(v2: boolean): Buffer {
  const out = Buffer.alloc(v2 ? 76 : 20);
  out.write("DONE", 0, "latin1");
  return out;
}
