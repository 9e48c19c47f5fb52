/**
 * A private network namespace (`unshare -rn`: a user namespace that maps us to root, and a
 * network of its own with only loopback), held open by a process that waits on its stdin.
 * Commands run in it through nsenter: they may bind any port, the default ones included, without
 * meeting anything on this machine (its own Redis on 6379, MariaDB on 3306...).
 */
export class NetNamespace {
  private holder: ReturnType<typeof Bun.spawn> | null = null;

  /** Whether the kernel lets this user make one (false: not opened). */
  static available(): boolean {
    try {
      return Bun.spawnSync(["unshare", "-rn", "true"], { stderr: "pipe" }).exitCode === 0;
    } catch {
      return false;
    }
  }

  get open(): boolean {
    return this.holder !== null;
  }

  async start(): Promise<void> {
    const holder = Bun.spawn(["unshare", "-rn", "sh", "-c", "ip link set lo up && echo ready && exec cat"], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const first = await holder.stdout.getReader().read();
    if (new TextDecoder().decode(first.value).trim() !== "ready") throw new Error(`cannot set up the network namespace: ${await new Response(holder.stderr).text()}`);
    this.holder = holder;
  }

  /** argv that runs a shell line in the namespace (or here, when not opened); `exec`, so signals reach the command itself. */
  argv(line: string): string[] {
    const sh = ["sh", "-c", `exec ${line}`];
    return this.holder ? ["nsenter", "-t", String(this.holder.pid), "-U", "-n", "--preserve-credentials", "--", ...sh] : sh;
  }

  async run(line: string, opts: { cwd?: string; env?: Record<string, string | undefined> } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
    const proc = Bun.spawn(this.argv(line), { cwd: opts.cwd, env: opts.env ?? process.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    return { code, stdout, stderr };
  }

  close(): void {
    this.holder?.kill();
    this.holder = null;
  }
}
