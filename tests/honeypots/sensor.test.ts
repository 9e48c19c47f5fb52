/**
 * One sensor with every built-in kind, as an operator sets it up: Core and a node (`honeybee
 * up`) in a network namespace of their own, so each kind takes its service's real port (22, 80,
 * 3306, 6379 ...; this machine's own Redis and MariaDB are not in the way), every kind installed
 * with `honeybee install`, then one `nmap -sV` over all their ports, which must name each
 * emulated product, and the memory the node and its honeypots take together.
 *
 * Memory is counted as the sum of each process's PSS (proportional set size): the Bun binary's
 * pages are mapped by every process and counted once, shared among them, which is what the host
 * really spends; the sum of RSS, which counts them once per process, is printed beside it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LiveProcess } from "../cli/cli-helpers";
import { ROOT, until } from "../helpers";
import { requireTool } from "../helpers/clients";
import { NetNamespace } from "../helpers/netns";

interface Kind {
  kind: string;
  config: Record<string, string>;
  /** Port -> what nmap's service column must say there. */
  expect: Record<number, RegExp>;
}

const KINDS: Kind[] = [
  { kind: "cowrie", config: { ssh_port: "22", telnet_port: "23" }, expect: { 22: /OpenSSH 9\.2p1 Debian/, 23: /Linux telnetd/ } },
  { kind: "honnypotter", config: { http_port: "8080" }, expect: { 8080: /nginx/ } },
  { kind: "redis", config: { redis_port: "6379" }, expect: { 6379: /Redis key-value store/ } },
  { kind: "mysql", config: { mysql_port: "3306" }, expect: { 3306: /MySQL 8\.0/ } },
  { kind: "adb", config: { adb_port: "5555" }, expect: { 5555: /Android Debug Bridge/ } },
  { kind: "docker", config: { docker_port: "2375" }, expect: { 2375: /docker\s+Docker 26\.1\.4 \(API 1\.45\)/ } },
  // The catch-all answers as the banner configured for a port says.
  { kind: "tcp", config: { ports: "21", banners: `'{"21":"220 (vsFTPd 3.0.3)\\r\\n"}'` }, expect: { 21: /ftp\s+vsftpd 3\.0\.3/ } },
  { kind: "web", config: { http_port: "80", https_port: "443" }, expect: { 80: /http\s+Apache httpd 2\.4\.62/, 443: /ssl\/http\s+Apache httpd 2\.4\.62/ } },
];

const MAX_PSS_MB = 300;
const ns = new NetNamespace();
const data = mkdtempSync(join(tmpdir(), "honeybee-sensor-"));
let up: LiveProcess;

/** Every process below `pid`, by their parents in /proc. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {}
  }
  const out: number[] = [];
  for (let queue = [pid]; queue.length > 0; ) {
    const next = children.get(queue.shift()!) ?? [];
    out.push(...next);
    queue.push(...next);
  }
  return out;
}

const kb = (pid: number, file: string, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/${file}`, "utf8"))?.[1] ?? 0);

beforeAll(async () => {
  // Without a namespace of its own (a kernel that refuses one) it runs on the host, as the
  // README walkthrough does, and needs those ports free.
  if (NetNamespace.available()) await ns.start();
  up = new LiveProcess(ns.argv(`bin/honeybee up --data ${data}`), { cwd: ROOT, env: { HONEYBEE_CONFIG: undefined } });
  await up.waitFor("Ctrl-C stops the node, its honeypots and Core.");
});

afterAll(async () => {
  if (up && up.proc.exitCode === null) await up.stop("SIGTERM");
  ns.close();
  rmSync(data, { recursive: true, force: true });
});

describe("a sensor running every built-in kind", () => {
  test("each kind installs and runs on its service's port; nmap -sV names every product; node and honeypots fit in the memory bound", async () => {
    for (const { kind, config } of KINDS) {
      const flags = Object.entries(config).map(([k, v]) => `-c ${k}=${v}`).join(" ");
      const r = await ns.run(`bin/honeybee install local ${kind} --pot-id ${kind}-1 ${flags} --start`, { cwd: ROOT });
      expect({ kind, code: r.code, out: r.stdout + r.stderr }).toEqual({ kind, code: 0, out: expect.stringContaining(`${kind}-1 is Running`) });
    }

    const ports = KINDS.flatMap((k) => Object.keys(k.expect));
    const scan = await ns.run(`${requireTool("nmap")} -sV -Pn -n -p ${ports.join(",")} 127.0.0.1`);
    expect(scan.code).toBe(0);
    const lines = new Map(scan.stdout.split("\n").flatMap((l) => (/^(\d+)\/tcp\s+open\s+/.test(l) ? [[Number(l.split("/")[0]), l] as const] : [])));
    const seen = KINDS.flatMap(({ kind, expect: wanted }) => Object.entries(wanted).map(([port, product]) => ({ kind, port, line: lines.get(Number(port)) ?? "(not open)", ok: product.test(lines.get(Number(port)) ?? "") })));
    console.log(seen.map((s) => s.line).join("\n"));
    expect(seen.filter((s) => !s.ok)).toEqual([]);
    expect(scan.stdout).not.toContain("SF-Port");

    // nmap's probes were attacks like any other (the login page's, a login): every kind's events went through the node to
    // Core, and every kind that keeps sessions has them there.
    const api = async (path: string) => JSON.parse((await ns.run(`curl -s 'http://127.0.0.1:9002${path}'`)).stdout);
    // The WordPress login records logins only: one for it.
    expect((await ns.run("curl -s -o /dev/null -X POST http://127.0.0.1:8080/wp-login.php -d log=admin -d pwd=hunter2")).code).toBe(0);
    for (const { kind } of KINDS) {
      const events = await until(async () => ((await api(`/api/v1/events?pot_type=${kind}&limit=1`)).events.length > 0 ? true : null), `${kind}'s events on Core`);
      expect({ kind, events }).toEqual({ kind, events: true });
      if (kind !== "honnypotter") expect({ kind, sessions: (await api(`/api/v1/sessions?pot_type=${kind}&limit=1`)).sessions.length }).toEqual({ kind, sessions: 1 });
    }

    // The node is `up`'s child; its honeypots are the node's.
    const [node] = descendants(up.proc.pid).filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("\0node\0"));
    const sensor = [node!, ...descendants(node!)];
    const pss = sensor.reduce((sum, p) => sum + kb(p, "smaps_rollup", "Pss"), 0) / 1024;
    const rss = sensor.reduce((sum, p) => sum + kb(p, "status", "VmRSS"), 0) / 1024;
    console.log(`sensor: node agent and ${sensor.length - 1} honeypot processes: PSS ${pss.toFixed(1)} MB (RSS summed per process ${rss.toFixed(1)} MB)`);
    expect(sensor.length - 1).toBeGreaterThanOrEqual(KINDS.length);
    expect(pss).toBeLessThan(MAX_PSS_MB);
  }, 300_000);
});
