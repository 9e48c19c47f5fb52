/**
 * The fake daemon's memory: images pulled, containers created, execs, per pot and bounded (the
 * oldest go first), so a bot that creates containers in a loop costs a fixed amount. A container
 * "runs" its command through the shell emulation when it starts: attached clients get the
 * output and see it exit; a detached one whose command the emulation does not finish (a miner,
 * `sleep`) stays Up, as it would on a real host, so later `ps` and `exec` find it.
 */
import { randomBytes } from "node:crypto";
import { defaultCmd, type HostFacts, type ImageRef, imageId, imageSize, randomName } from "./facts.ts";
import { flavourOf } from "./files.ts";
import { type Output, run } from "./shell.ts";

export const LIMITS = { images: 64, containers: 128, execs: 256, tombstones: 64, logBytes: 64 * 1024, attachers: 8, waiters: 16 };

export interface Image {
  ref: ImageRef;
  id: string;
  created: number;
  size: number;
}

export interface ContainerSpec {
  image: ImageRef;
  /** The image as the client named it ("alpine"). */
  imageName: string;
  name: string;
  cmd: string[];
  entrypoint: string[];
  env: string[];
  binds: string[];
  mounts: string[];
  privileged: boolean;
  networkMode: string;
  pidMode: string;
  capAdd: string[];
  user: string;
  workingDir: string;
  tty: boolean;
  openStdin: boolean;
  autoRemove: boolean;
}

export interface Container extends ContainerSpec {
  id: string;
  created: number;
  status: "created" | "running" | "exited";
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  log: { stream: 1 | 2; text: string }[];
  logBytes: number;
  attachers: Set<Attacher>;
  waiters: Set<Waiter>;
}

export interface Exec {
  id: string;
  containerId: string;
  cmd: string[];
  tty: boolean;
  privileged: boolean;
  user: string;
  attachStdin: boolean;
  running: boolean;
  exitCode: number | null;
}

/** An attached client's stream. */
export interface Attacher {
  write(stream: 1 | 2, text: string): void;
  end(): void;
  /** The container started and keeps running (it reads the stdin an attached client holds). */
  started?(): void;
}

export type WaitCondition = "not-running" | "next-exit" | "removed";

interface Waiter {
  condition: WaitCondition;
  resolve(exitCode: number): void;
}

export const newId = (): string => randomBytes(32).toString("hex");

export class DaemonState {
  readonly images = new Map<string, Image>();
  readonly containers = new Map<string, Container>();
  readonly execs = new Map<string, Exec>();
  /** Exit codes of containers removed lately, so a wait that comes after `--rm` still gets one. */
  private readonly tombstones = new Map<string, number>();

  constructor(
    readonly host: HostFacts,
    private readonly now: () => number = Date.now,
  ) {}

  imageKey(ref: ImageRef): string {
    return `${ref.repo}:${ref.tag}`;
  }

  findImage(ref: ImageRef): Image | undefined {
    return this.images.get(this.imageKey(ref));
  }

  /** Records a pulled image; answers whether it was there already. */
  pull(ref: ImageRef, created = builtAt(ref, this.now())): boolean {
    const key = this.imageKey(ref);
    if (this.images.has(key)) return true;
    evict(this.images, LIMITS.images - 1);
    this.images.set(key, { ref, id: imageId(ref), created, size: imageSize(ref) });
    return false;
  }

  /** By full id, unique id prefix, or name (with or without its leading slash). */
  find(ref: string): Container | undefined {
    const byId = this.containers.get(ref);
    if (byId) return byId;
    const name = ref.replace(/^\//, "");
    let prefixed: Container | undefined;
    let matches = 0;
    for (const c of this.containers.values()) {
      if (c.name === name) return c;
      if (ref.length >= 1 && /^[0-9a-f]+$/.test(ref) && c.id.startsWith(ref)) {
        prefixed = c;
        matches++;
      }
    }
    return matches === 1 ? prefixed : undefined;
  }

  nameTaken(name: string): Container | undefined {
    for (const c of this.containers.values()) if (c.name === name) return c;
    return undefined;
  }

  create(spec: Omit<ContainerSpec, "name"> & { name: string }, created = this.now()): Container {
    if (this.containers.size >= LIMITS.containers) this.evictContainer();
    let name = spec.name;
    while (name === "" || this.nameTaken(name)) name = randomName();
    const cmd = spec.cmd.length > 0 || spec.entrypoint.length > 0 ? spec.cmd : defaultCmd(spec.image);
    const c: Container = {
      ...spec,
      name,
      cmd,
      id: newId(),
      created,
      status: "created",
      startedAt: 0,
      finishedAt: 0,
      exitCode: 0,
      log: [],
      logBytes: 0,
      attachers: new Set(),
      waiters: new Set(),
    };
    this.containers.set(c.id, c);
    return c;
  }

  /** Runs the container's command (emulated) and answers whether it was started (false: it already ran). */
  start(c: Container): boolean {
    if (c.status === "running") return false;
    c.status = "running";
    c.startedAt = this.now();
    c.exitCode = 0;
    const result = run([...c.entrypoint, ...c.cmd], this.context(c));
    for (const stream of [1, 2] as const) {
      const text = stream === 1 ? result.stdout : result.stderr;
      if (text === "") continue;
      this.log(c, stream, text);
      for (const a of c.attachers) a.write(stream, text);
    }
    // An attached client waits for the exit, so the process ends unless it reads a stdin the client holds open.
    const readsStdin = c.openStdin && !result.finished;
    if (result.finished || (c.attachers.size > 0 && !readsStdin)) this.exit(c, result.exitCode);
    else for (const a of c.attachers) a.started?.();
    return true;
  }

  /** A line typed into a container's (or, not logged, an exec's) shell over an attached stdin. */
  typed(c: Container, line: string, logged: boolean): Output {
    const result = run(["sh", "-c", line], this.context(c));
    if (logged && result.stdout) this.log(c, 1, result.stdout);
    if (logged && result.stderr) this.log(c, 2, result.stderr);
    return result;
  }

  stop(c: Container, exitCode = 137): boolean {
    if (c.status !== "running") return false;
    this.exit(c, exitCode);
    return true;
  }

  attach(c: Container, a: Attacher): (() => void) | null {
    if (c.attachers.size >= LIMITS.attachers) return null;
    c.attachers.add(a);
    return () => c.attachers.delete(a);
  }

  /** Resolves at once when the condition already holds; otherwise returns a cancel function. */
  wait(ref: string, condition: WaitCondition, resolve: (exitCode: number) => void): (() => void) | "no such container" | "busy" {
    const c = this.find(ref);
    if (!c) {
      const code = this.tombstones.get(ref) ?? [...this.tombstones].find(([id]) => /^[0-9a-f]{12,}$/.test(ref) && id.startsWith(ref))?.[1];
      if (code === undefined) return "no such container";
      resolve(code);
      return () => {};
    }
    if (condition === "not-running" && c.status !== "running") {
      resolve(c.exitCode);
      return () => {};
    }
    if (c.waiters.size >= LIMITS.waiters) return "busy";
    const waiter = { condition, resolve };
    c.waiters.add(waiter);
    return () => c.waiters.delete(waiter);
  }

  remove(c: Container): void {
    this.containers.delete(c.id);
    this.tombstones.set(c.id, c.exitCode);
    evict(this.tombstones, LIMITS.tombstones);
    for (const a of c.attachers) a.end();
    c.attachers.clear();
    for (const w of c.waiters) w.resolve(c.exitCode);
    c.waiters.clear();
    for (const [id, e] of this.execs) if (e.containerId === c.id) this.execs.delete(id);
  }

  createExec(c: Container, spec: Omit<Exec, "id" | "containerId" | "running" | "exitCode">): Exec {
    evict(this.execs, LIMITS.execs - 1);
    const e: Exec = { ...spec, id: newId(), containerId: c.id, running: false, exitCode: null };
    this.execs.set(e.id, e);
    return e;
  }

  /** Runs an exec's command (emulated): its output, and it is over. */
  runExec(e: Exec): Output {
    const c = this.containers.get(e.containerId);
    const result = c ? run(e.cmd, this.context(c)) : { stdout: "", stderr: "", exitCode: 126, finished: true };
    e.exitCode = result.exitCode;
    return result;
  }

  counts(): { containers: number; running: number; stopped: number; images: number } {
    let running = 0;
    for (const c of this.containers.values()) if (c.status === "running") running++;
    return { containers: this.containers.size, running, stopped: this.containers.size - running, images: this.images.size };
  }

  context(c: Container) {
    const hostMounts = c.binds
      .map((b) => b.split(":"))
      .filter((parts) => parts[0] === "/" && parts[1])
      .map((parts) => parts[1]!.replace(/\/+$/, "") || "/");
    return { flavour: flavourOf(c.image.remote), hostname: c.id.slice(0, 12), hostHostname: this.host.hostname, hostMounts, ncpu: this.host.ncpu };
  }

  private log(c: Container, stream: 1 | 2, text: string): void {
    if (c.logBytes >= LIMITS.logBytes) return;
    const kept = text.slice(0, LIMITS.logBytes - c.logBytes);
    c.log.push({ stream, text: kept });
    c.logBytes += kept.length;
  }

  private exit(c: Container, exitCode: number): void {
    c.status = "exited";
    c.exitCode = exitCode;
    c.finishedAt = this.now();
    for (const a of c.attachers) a.end();
    c.attachers.clear();
    for (const w of c.waiters) {
      // "removed" waiters hear from remove(), which an auto-removed container reaches just below.
      if (w.condition === "removed") continue;
      w.resolve(exitCode);
      c.waiters.delete(w);
    }
    if (c.autoRemove) this.remove(c);
  }

  /** The oldest container not running, else the oldest. */
  private evictContainer(): void {
    let victim: Container | undefined;
    for (const c of this.containers.values()) {
      if (c.status !== "running") {
        victim = c;
        break;
      }
    }
    victim ??= this.containers.values().next().value;
    if (victim) this.remove(victim);
  }
}

/** When an image was built: weeks before it was pulled, the same for the same image. */
export function builtAt(ref: ImageRef, now: number): number {
  const days = 6 + (Number.parseInt(imageId(ref).slice(0, 4), 16) % 60);
  return now - days * 86_400_000 - (Number.parseInt(imageId(ref).slice(4, 8), 16) % 86_400) * 1000;
}

/** Drops the oldest entries of an insertion-ordered map until it holds at most `max`. */
function evict<V>(map: Map<string, V>, max: number): void {
  for (const key of map.keys()) {
    if (map.size <= max) return;
    map.delete(key);
  }
}
