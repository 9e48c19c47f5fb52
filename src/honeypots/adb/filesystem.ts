/**
 * The handset's file tree as the `shell` user (uid 2000) sees it: a fixed skeleton of an Android
 * 10 root, with /data unreadable, /system read-only, and two places a shell user may write:
 * /data/local/tmp (where every ADB bot drops its payload) and the shared storage behind /sdcard.
 * Files pushed in a session are added there with their size and mode (and the first bytes, for
 * `cat`); nothing is ever written to the real disk from here.
 */
import { CPUINFO, MEMINFO, procVersion } from "./device.ts";

export const S_IFDIR = 0o040000;
export const S_IFREG = 0o100000;
export const S_IFLNK = 0o120000;

const ROOT = 0;
const SHELL = 2000;
const MEDIA_RW = 1023;
const EVERYONE = 9997;
/** Files the image was built with carry the build system's fixed date; /data is newer. */
const IMAGE_TIME = 1230768000;
const DATA_TIME = 1597000000;
/** Bytes of a pushed file kept for `cat`, and pushed entries per session. */
export const HEAD_BYTES = 16 * 1024;
const MAX_ENTRIES = 256;

export interface FsNode {
  kind: "dir" | "file" | "link";
  perm: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  ino: number;
  /** For a directory: may the shell user list it. */
  readable: boolean;
  writable: boolean;
  text?: string;
  target?: string;
  children?: Map<string, FsNode>;
}

let nextIno = 1000;

function dir(perm: number, entries: Record<string, FsNode> = {}, opts: Partial<FsNode> = {}): FsNode {
  return { kind: "dir", perm, uid: ROOT, gid: ROOT, size: 4096, mtime: IMAGE_TIME, ino: nextIno++, readable: true, writable: false, children: new Map(Object.entries(entries)), ...opts };
}

function file(text: string, opts: Partial<FsNode> = {}): FsNode {
  return { kind: "file", perm: 0o644, uid: ROOT, gid: ROOT, size: Buffer.byteLength(text), mtime: IMAGE_TIME, ino: nextIno++, readable: true, writable: false, text, ...opts };
}

function link(target: string): FsNode {
  return { kind: "link", perm: 0o777, uid: ROOT, gid: ROOT, size: target.length, mtime: IMAGE_TIME, ino: nextIno++, readable: true, writable: false, target };
}

const closed = (perm = 0o771, extra: Partial<FsNode> = {}) => dir(perm, {}, { readable: false, ...extra });

function storage(): FsNode {
  const user = { uid: ROOT, gid: EVERYONE, perm: 0o2770, mtime: DATA_TIME, writable: true };
  const folders = ["Alarms", "Android", "Audiobooks", "DCIM", "Documents", "Download", "Movies", "Music", "Notifications", "Pictures", "Podcasts", "Recordings", "Ringtones"];
  return dir(0o2770, Object.fromEntries(folders.map((f) => [f, dir(0o2770, {}, { ...user })])), { ...user, gid: MEDIA_RW });
}

function systemBin(): FsNode {
  const tools = ["sh", "toybox", "getprop", "setprop", "ls", "cat", "id", "uname", "ps", "pm", "am", "cmd", "input", "settings", "logcat", "chmod", "rm", "mkdir", "ping", "screencap", "dumpsys", "reboot"];
  return dir(0o751, Object.fromEntries(tools.map((t) => [t, t === "sh" || t === "toybox" ? file("", { perm: 0o755, gid: 2000, size: t === "sh" ? 326048 : 1076904 }) : link("toybox")])), { gid: 2000 });
}

/** A fresh tree for one session. */
export function baseTree(buildProp: string): FsNode {
  const emulated = dir(0o711, { "0": storage() }, { uid: ROOT, gid: MEDIA_RW, readable: false });
  return dir(0o755, {
    acct: dir(0o555, { uid_0: closed(0o555) }),
    apex: dir(0o755, { "com.android.runtime": closed(0o755) }),
    bin: link("/system/bin"),
    bugreports: link("/data/user_de/0/com.android.shell/files/bugreports"),
    cache: closed(0o770, { uid: 1000, gid: 2001 }),
    config: dir(0o500, {}, { readable: false }),
    d: link("/sys/kernel/debug"),
    data: closed(0o771, { uid: 1000, gid: 1000, mtime: DATA_TIME, children: new Map([["local", dir(0o751, { tmp: dir(0o771, {}, { uid: SHELL, gid: SHELL, mtime: DATA_TIME, writable: true }) }, { uid: ROOT, gid: ROOT, readable: false, mtime: DATA_TIME })]]) }),
    dev: dir(0o755, { null: file("", { perm: 0o666, size: 0 }), zero: file("", { perm: 0o666, size: 0 }) }),
    etc: link("/system/etc"),
    init: closed(0o750),
    metadata: closed(0o771),
    mnt: dir(0o755, { sdcard: link("/storage/self/primary") }),
    odm: dir(0o755),
    oem: dir(0o755),
    proc: dir(0o555, { cpuinfo: file(CPUINFO, { perm: 0o444, size: 0 }), meminfo: file(MEMINFO, { perm: 0o444, size: 0 }), version: file(procVersion(), { perm: 0o444, size: 0 }) }),
    product: dir(0o755, { app: dir(0o755), priv_app: dir(0o755) }),
    sdcard: link("/storage/self/primary"),
    storage: dir(0o755, { emulated, self: dir(0o755, { primary: link("/storage/emulated/0") }) }),
    sys: dir(0o755),
    system: dir(0o755, {
      bin: systemBin(),
      "build.prop": file(buildProp, { perm: 0o600, readable: false }),
      etc: dir(0o755, { hosts: file("127.0.0.1       localhost\n::1             ip6-localhost\n") }),
      framework: dir(0o755),
      lib64: dir(0o755),
    }),
    system_ext: dir(0o755),
    vendor: dir(0o755),
  });
}

export class FakeFs {
  private readonly root: FsNode;
  private pushed = 0;

  constructor(buildProp: string) {
    this.root = baseTree(buildProp);
  }

  /** An absolute, normalised path: `.`, `..` and repeated slashes resolved. */
  static resolve(cwd: string, path: string): string {
    const parts: string[] = [];
    for (const part of (path.startsWith("/") ? path : `${cwd}/${path}`).split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") parts.pop();
      else parts.push(part);
    }
    return `/${parts.join("/")}`;
  }

  /** The node at an absolute path; links are followed except (with `follow` false) the last one. */
  lookup(path: string, follow = true, depth = 0): FsNode | null {
    if (depth > 8) return null;
    let node = this.root;
    const parts = path.split("/").filter(Boolean);
    for (let i = 0; i < parts.length; i++) {
      const child = node.children?.get(parts[i] as string);
      if (!child) return null;
      if (child.kind === "link" && (follow || i < parts.length - 1)) {
        const target = FakeFs.resolve(`/${parts.slice(0, i).join("/")}`, child.target as string);
        const resolved = this.lookup(target, true, depth + 1);
        if (!resolved) return null;
        node = resolved;
      } else {
        node = child;
      }
      if (i < parts.length - 1 && node.kind !== "dir") return null;
    }
    return node;
  }

  /** A directory's entries, sorted, or why not. */
  list(path: string): { entries: [string, FsNode][] } | { error: "ENOENT" | "EACCES" | "ENOTDIR" } {
    const node = this.lookup(path);
    if (!node) return { error: "ENOENT" };
    if (node.kind !== "dir") return { error: "ENOTDIR" };
    if (!node.readable) return { error: "EACCES" };
    return { entries: [...(node.children ?? new Map<string, FsNode>())].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) };
  }

  /**
   * Records a pushed file (parents made as adbd's secure_mkdirs does, inside a writable tree);
   * answers the reason a real device gives when it cannot be written.
   */
  put(path: string, perm: number, size: number, mtime: number, head: Uint8Array): string | null {
    const parts = path.split("/").filter(Boolean);
    const name = parts.pop();
    if (!name) return "couldn't create file: Is a directory";
    let node = this.root;
    for (let i = 0; i < parts.length; i++) {
      const childPath = `/${parts.slice(0, i + 1).join("/")}`;
      let child = this.lookup(childPath);
      if (!child) {
        if (!node.writable) return "secure_mkdirs() failed: Permission denied";
        if (this.pushed >= MAX_ENTRIES) return "secure_mkdirs() failed: No space left on device";
        child = dir(0o771, {}, { uid: SHELL, gid: SHELL, mtime: DATA_TIME, writable: true });
        node.children?.set(parts[i] as string, child);
        this.pushed++;
      }
      if (child.kind !== "dir") return "secure_mkdirs() failed: Not a directory";
      node = child;
    }
    const existing = node.children?.get(name);
    if (existing?.kind === "dir") return "couldn't create file: Is a directory";
    if (!node.writable) return path.startsWith("/system") || path.startsWith("/vendor") || path.startsWith("/product") ? "couldn't create file: Read-only file system" : "couldn't create file: Permission denied";
    if (!existing && this.pushed >= MAX_ENTRIES) return "couldn't create file: No space left on device";
    if (!existing) this.pushed++;
    const text = Buffer.from(head.subarray(0, HEAD_BYTES)).toString("latin1");
    node.children?.set(name, { kind: "file", perm: perm & 0o7777, uid: SHELL, gid: SHELL, size, mtime, ino: nextIno++, readable: true, writable: true, text });
    return null;
  }

  /** Removes a file the shell user may remove; the reason when not. */
  remove(path: string): string | null {
    const parent = this.lookup(path.slice(0, path.lastIndexOf("/")) || "/");
    const name = path.slice(path.lastIndexOf("/") + 1);
    const node = parent?.children?.get(name);
    if (!parent || !node) return "No such file or directory";
    if (!parent.writable) return path.startsWith("/system") ? "Read-only file system" : "Permission denied";
    if (node.kind === "dir") return "Is a directory";
    parent.children?.delete(name);
    return null;
  }

  mkdir(path: string): string | null {
    if (this.lookup(path, false)) return "File exists";
    const parent = this.lookup(path.slice(0, path.lastIndexOf("/")) || "/");
    if (!parent) return "No such file or directory";
    if (!parent.writable) return path.startsWith("/system") ? "Read-only file system" : "Permission denied";
    if (this.pushed >= MAX_ENTRIES) return "No space left on device";
    this.pushed++;
    parent.children?.set(path.slice(path.lastIndexOf("/") + 1), dir(0o771, {}, { uid: SHELL, gid: SHELL, mtime: Math.floor(Date.now() / 1000), writable: true }));
    return null;
  }
}

export function modeOf(node: FsNode): number {
  return (node.kind === "dir" ? S_IFDIR : node.kind === "link" ? S_IFLNK : S_IFREG) | node.perm;
}
