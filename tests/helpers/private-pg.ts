/**
 * A private PostgreSQL server for the tests that stop or kill one: the machine's shared server
 * is never touched. Debian's server programs (scripts/test-deps.ts finds them) on a fresh
 * temporary folder, trust authentication, TCP on 127.0.0.1 only on a free port, the Unix
 * socket inside the folder, fsync and full-page writes off because a test's data only has to
 * survive a crash of the server, not of the machine. synchronous_commit stays on: a commit is
 * in the operating system's hands before it is acknowledged, so a kill() loses none.
 *
 * initdb and postgres refuse to run as root, and the tests run as root on these machines: then
 * they run as the `postgres` user (runuser), which owns the folder.
 *
 *   await using pg = await startPrivatePg();
 *   pg.url          postgres://postgres@127.0.0.1:PORT/postgres
 *   await pg.stop()     fast shutdown, the data stays
 *   await pg.start()    again, same port, same data
 *   await pg.kill()     SIGKILL of the server and its backends: a crash (recovery at the next start)
 *   await pg.destroy()  stop, then the folder is removed
 */
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { SQL } from "bun";
import { requireTool } from "./clients";
import { freePort, until } from "./index";

export type PrivatePg = {
  /** postgres://postgres@127.0.0.1:PORT/postgres (superuser, no password). */
  url: string;
  port: number;
  /** The temporary folder: data/, server.log and the Unix socket. */
  dir: string;
  /** Fast shutdown (clients disconnected, a checkpoint written); the data stays. */
  stop(): Promise<void>;
  /** Starts the server again on the same port and data; resolves once it takes connections. */
  start(): Promise<void>;
  /** SIGKILL of the postmaster and every backend at once, as a crash; start() recovers. */
  kill(): Promise<void>;
  /** Stops the server (or kills it when it does not stop) and removes the folder. */
  destroy(): Promise<void>;
  /** The last lines of the server's log, for error messages. */
  logTail(lines?: number): string;
  [Symbol.asyncDispose](): Promise<void>;
};

/** Servers still running when the test process exits are killed and their folders removed. */
const live = new Set<{ pids(): number[]; dir: string }>();
process.once("exit", () => {
  for (const s of live) {
    for (const pid of s.pids()) signal(pid, "SIGKILL");
    rmSync(s.dir, { recursive: true, force: true });
  }
});

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {}
}

/** Gone, or a zombie nobody has reaped yet (it holds no memory, socket or file any more). */
function dead(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /, "")[0] === "Z";
  } catch {
    return true;
  }
}

/** The processes whose parent is `pid` (the postmaster's backends and auxiliary processes). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // Fields after the command name, which may hold spaces and parentheses: state, ppid, ...
      const ppid = Number(readFileSync(`/proc/${name}/stat`, "utf8").replace(/^.*\) /, "").split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {}
  }
  return out;
}

function postgresUser(): { uid: number; gid: number } {
  const id = (flag: string) => {
    const r = Bun.spawnSync(["id", flag, "postgres"], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`the tests run as root and PostgreSQL refuses root, but there is no \`postgres\` user to run it as: ${r.stderr.toString().trim()}`);
    return Number(r.stdout.toString().trim());
  };
  return { uid: id("-u"), gid: id("-g") };
}

export async function startPrivatePg(): Promise<PrivatePg> {
  const initdb = realpathSync(requireTool("initdb"));
  // pg_ctl of the same version as initdb: the data folder's format is per major version.
  const sameDir = join(dirname(initdb), "pg_ctl");
  const pgCtl = existsSync(sameDir) ? sameDir : requireTool("pg_ctl");
  const dir = mkdtempSync(join(tmpdir(), "honeybee-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const asRoot = process.getuid?.() === 0;
  const port = freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;

  const logTail = (lines = 30) => (existsSync(log) ? readFileSync(log, "utf8").trimEnd().split("\n").slice(-lines).join("\n") : "(no server log)");

  async function run(what: string, argv: string[]): Promise<void> {
    const proc = Bun.spawn([...(asRoot ? ["runuser", "-u", "postgres", "--"] : []), ...argv], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0) throw new Error(`private PostgreSQL in ${dir}: ${what} failed (exit ${code}):\n${`${out}${err}`.trim()}\n--- server log ---\n${logTail()}`);
  }

  const postmasterPid = (): number | null => {
    try {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      return pid > 0 && !dead(pid) ? pid : null;
    } catch {
      return null;
    }
  };
  const entry = {
    dir,
    pids: () => {
      const pid = postmasterPid();
      return pid ? [pid, ...childrenOf(pid)] : [];
    },
  };
  live.add(entry);

  async function start(): Promise<void> {
    // -w: pg_ctl returns once the server accepts connections (or fails after -t seconds).
    await run("pg_ctl start", [pgCtl, "start", "-w", "-t", "60", "-D", data, "-l", log]);
    const sql = new SQL(url, { max: 1, idleTimeout: 0, connectionTimeout: 10 });
    try {
      await sql`select 1`;
    } catch (e) {
      throw new Error(`private PostgreSQL started but does not answer at ${url}: ${(e as Error).message}\n--- server log ---\n${logTail()}`);
    } finally {
      await sql.close().catch(() => {});
    }
  }

  async function stop(): Promise<void> {
    await run("pg_ctl stop", [pgCtl, "stop", "-w", "-t", "60", "-m", "fast", "-D", data]);
  }

  async function kill(): Promise<void> {
    const pid = postmasterPid();
    if (!pid) throw new Error(`private PostgreSQL in ${dir} is not running\n--- server log ---\n${logTail()}`);
    // Stopped first, so it forks no backend between the listing of its children and the kill.
    signal(pid, "SIGSTOP");
    const pids = [pid, ...childrenOf(pid)];
    for (const p of pids) signal(p, "SIGKILL");
    await until(() => pids.every(dead), `the killed PostgreSQL processes ${pids.join(", ")} to exit`, 1000);
    // A postmaster nobody reaps stays a zombie, which postgres would take for a live server
    // holding the lock files; after a real crash they would be stale the same way.
    rmSync(join(data, "postmaster.pid"), { force: true });
    rmSync(join(dir, `.s.PGSQL.${port}.lock`), { force: true });
  }

  async function destroy(): Promise<void> {
    if (postmasterPid()) await stop().catch(() => kill());
    live.delete(entry);
    rmSync(dir, { recursive: true, force: true });
  }

  try {
    if (asRoot) {
      const { uid, gid } = postgresUser();
      chownSync(dir, uid, gid);
    }
    await run("initdb", [initdb, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
    appendFileSync(
      join(data, "postgresql.conf"),
      [
        "",
        "# tests/helpers/private-pg.ts",
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        `unix_socket_directories = '${dir}'`,
        "fsync = off",
        "full_page_writes = off",
        "",
      ].join("\n"),
    );
    await start();
  } catch (e) {
    await destroy().catch(() => {});
    throw e;
  }

  return { url, port, dir, stop, start, kill, destroy, logTail, [Symbol.asyncDispose]: destroy };
}
