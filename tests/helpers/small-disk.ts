/**
 * A file system of a few megabytes that a test can fill up or make read-only under a running
 * process: a tmpfs mounted in a mount namespace of its own (`unshare -rm`, no privileges on
 * the host), held open by a process that waits on its stdin. Commands run inside with nsenter.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class SmallDisk {
  /** The mount point; the host sees an empty folder, processes started by `spawn` the tmpfs. */
  readonly dir = mkdtempSync(join(tmpdir(), "honeybee-disk-"));
  private holder: ReturnType<typeof Bun.spawn> | null = null;

  static async open(sizeMb = 16): Promise<SmallDisk> {
    const disk = new SmallDisk();
    const holder = Bun.spawn(["unshare", "-rm", "sh", "-c", `mount -t tmpfs -o size=${sizeMb}m tmpfs '${disk.dir}' && echo ready && exec cat`], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    disk.holder = holder;
    const first = await holder.stdout.getReader().read();
    if (new TextDecoder().decode(first.value).trim() !== "ready") throw new Error(`cannot mount a tmpfs in a namespace: ${await new Response(holder.stderr).text()}`);
    return disk;
  }

  /** argv that runs a program inside the namespace, where `dir` is the tmpfs. */
  argv(argv: string[]): string[] {
    return ["nsenter", "-t", String(this.holder!.pid), "-U", "-m", "--preserve-credentials", "--", ...argv];
  }

  private sh(script: string): { code: number; err: string } {
    const r = Bun.spawnSync(this.argv(["sh", "-c", script]), { stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, err: r.stderr.toString() };
  }

  /** Takes every free byte (a file that grows until the disk is full). */
  fill(): void {
    this.sh(`cat /dev/zero > '${this.dir}/filler'`);
  }

  /** The size of a file on the disk, in bytes (0 when it is not there). */
  size(name: string): number {
    const r = Bun.spawnSync(this.argv(["stat", "-c", "%s", join(this.dir, name)]), { stdout: "pipe", stderr: "ignore" });
    return r.exitCode === 0 ? Number(r.stdout.toString().trim()) : 0;
  }

  /** Gives the space back. */
  free(): void {
    const r = this.sh(`rm -f '${this.dir}/filler'`);
    if (r.code !== 0) throw new Error(r.err);
  }

  /** Makes the file system read-only under whoever has files open on it. */
  readOnly(): void {
    const r = this.sh(`mount -o remount,ro '${this.dir}'`);
    if (r.code !== 0) throw new Error(`remount read-only: ${r.err}`);
  }

  [Symbol.dispose](): void {
    this.holder?.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
