/**
 * The fake machine's filesystem: a fixed tree from host.ts plus what the session writes
 * (`echo x > /tmp/y`, `touch`, `mkdir`), so a bot that checks its own writes sees them.
 * Writes are bounded per session; past the bound the disk is "full", as a small VPS would be.
 */
import { DIRECTORIES, systemFiles } from "./host.ts";

const MAX_WRITTEN_BYTES = 128 * 1024;
const MAX_WRITTEN_FILES = 256;

export type Kind = "dir" | "file";

export class FakeFs {
  private readonly dirs = new Map<string, Set<string>>();
  private readonly files = new Map<string, string>();
  private readonly links = new Map<string, string>();
  private written = 0;
  private writtenFiles = 0;

  constructor(hostname: string, username: string, home: string) {
    for (const [dir, entries] of Object.entries(DIRECTORIES)) {
      const names = new Set<string>();
      for (const entry of entries) {
        // split always yields a first piece; a link's entry adds its target after the "@".
        const [name, target] = entry.split("@") as [string, string?];
        names.add(name);
        const path = join(dir, name);
        if (target) this.links.set(path, target.startsWith("/") ? target : join(dir, target));
        else if (!DIRECTORIES[path]) this.files.set(path, "");
      }
      this.dirs.set(dir, names);
    }
    for (const [path, content] of Object.entries(systemFiles(hostname, username))) this.files.set(path, content);
    if (!this.dirs.has(home)) {
      this.dirs.set(home, new Set([".bashrc", ".profile"]));
      this.dirs.get("/home")?.add(home.slice("/home/".length));
      this.files.set(`${home}/.bashrc`, this.files.get("/root/.bashrc") ?? "");
      this.files.set(`${home}/.profile`, this.files.get("/root/.profile") ?? "");
    }
  }

  /** An absolute, normalised path with symlinks followed. */
  resolve(cwd: string, path: string, home: string): string {
    const expanded = path === "~" ? home : path.startsWith("~/") ? home + path.slice(1) : path;
    const parts: string[] = [];
    for (const part of (expanded.startsWith("/") ? expanded : `${cwd}/${expanded}`).split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") parts.pop();
      else {
        parts.push(part);
        const link = this.links.get(`/${parts.join("/")}`);
        if (link) parts.splice(0, parts.length, ...link.split("/").filter(Boolean));
      }
    }
    return `/${parts.join("/")}`;
  }

  kind(path: string): Kind | null {
    if (this.dirs.has(path)) return "dir";
    return this.files.has(path) ? "file" : null;
  }

  isLink(path: string): string | undefined {
    return this.links.get(path);
  }

  list(path: string): string[] | null {
    const names = this.dirs.get(path);
    // Byte order, as ls sorts under the C.UTF-8 locale of a fresh Debian image.
    return names ? [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) : null;
  }

  read(path: string): string | null {
    return this.files.get(path) ?? null;
  }

  size(path: string): number {
    return this.dirs.has(path) ? 4096 : Buffer.byteLength(this.files.get(path) ?? "");
  }

  /** Returns an errno-style message on failure. */
  write(path: string, content: string, append: boolean): string | null {
    const parent = this.dirs.get(dirname(path));
    if (!parent) return "No such file or directory";
    if (this.dirs.has(path)) return "Is a directory";
    const previous = this.files.get(path);
    const next = append && previous !== undefined ? previous + content : content;
    const grows = Buffer.byteLength(next) - Buffer.byteLength(previous ?? "");
    if (this.written + grows > MAX_WRITTEN_BYTES || (previous === undefined && this.writtenFiles >= MAX_WRITTEN_FILES)) {
      return "No space left on device";
    }
    this.written += Math.max(0, grows);
    if (previous === undefined) this.writtenFiles++;
    this.files.set(path, next);
    parent.add(basename(path));
    return null;
  }

  mkdir(path: string): string | null {
    const parent = this.dirs.get(dirname(path));
    if (!parent) return "No such file or directory";
    if (this.kind(path)) return "File exists";
    if (this.writtenFiles++ >= MAX_WRITTEN_FILES) return "No space left on device";
    this.dirs.set(path, new Set());
    parent.add(basename(path));
    return null;
  }

  /** A function that puts the tree back as it is now (a line run again after its downloads). */
  snapshot(): () => void {
    const dirs = new Map([...this.dirs].map(([k, v]) => [k, new Set(v)]));
    const files = new Map(this.files);
    const links = new Map(this.links);
    const { written, writtenFiles } = this;
    return () => {
      this.dirs.clear();
      for (const [k, v] of dirs) this.dirs.set(k, v);
      this.files.clear();
      for (const [k, v] of files) this.files.set(k, v);
      this.links.clear();
      for (const [k, v] of links) this.links.set(k, v);
      this.written = written;
      this.writtenFiles = writtenFiles;
    };
  }

  remove(path: string): boolean {
    if (!this.files.delete(path) && !(this.dirs.get(path)?.size === 0 && this.dirs.delete(path))) return false;
    this.dirs.get(dirname(path))?.delete(basename(path));
    return true;
  }
}

function join(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

function dirname(path: string): string {
  const cut = path.lastIndexOf("/");
  return cut <= 0 ? "/" : path.slice(0, cut);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}
