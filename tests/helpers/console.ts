/**
 * The console's tests and screenshots: Debian's chromium driven by playwright-core (never a
 * downloaded browser), and a real system to look at: Core, a node agent, both built-in
 * honeypots, attacked by OpenSSH and curl.
 */
import { chromium, type Browser } from "playwright-core";
import { startNode, type NodeHandle } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { SSH_PASSWORD_OPTS, requireTool, sshPasswordEnv } from "./clients";
import type { CoreConfig } from "../../src/config";
import { freePort, getJson, startTestCore, tempDir, until, type TestCore } from "./index";
import { onPostgres } from "./postgres";

export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

export async function launchBrowser(): Promise<Browser & AsyncDisposable> {
  const browser = await chromium.launch({ executablePath: requireTool("chromium"), args: CHROMIUM_ARGS, headless: true });
  return Object.assign(browser, { [Symbol.asyncDispose]: () => browser.close() });
}

const SSH_OPTS = [...SSH_PASSWORD_OPTS, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password"];

export async function run(argv: string[], env?: Record<string, string | undefined>): Promise<{ code: number; out: string }> {
  const p = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe", stdin: "ignore", env });
  const out = await new Response(p.stdout).text();
  return { code: await p.exited, out };
}

/** OpenSSH: one password try; with a password the shell lets in, `command` runs in the fake shell. */
export const sshAttack = (port: number, user: string, password: string, command = "id") =>
  run([requireTool("ssh"), ...SSH_OPTS, "-p", String(port), `${user}@127.0.0.1`, command], sshPasswordEnv(password));

/** OpenSSH with a terminal (-tt): types `lines` into the shell, then `exit`; the pot records it. */
export async function sshShell(port: number, user: string, password: string, lines: string[]): Promise<{ code: number; out: string }> {
  const p = Bun.spawn([requireTool("ssh"), ...SSH_OPTS, "-tt", "-p", String(port), `${user}@127.0.0.1`], { stdin: "pipe", stdout: "pipe", stderr: "pipe", env: sshPasswordEnv(password) });
  p.stdin.write([...lines, "exit"].join("\n") + "\n");
  p.stdin.end();
  const out = await new Response(p.stdout).text();
  return { code: await p.exited, out };
}

/** curl: a WordPress login post. */
export const httpAttack = (port: number, user: string, password: string) =>
  run([requireTool("curl"), "-s", "-o", "/dev/null", "-w", "%{http_code}", "-d", `log=${user}&pwd=${password}`, `http://127.0.0.1:${port}/standalone.php`]);

export interface ConsoleSystem extends AsyncDisposable {
  core: TestCore;
  node: NodeHandle;
  nodeId: string;
  ports: { ssh: number; telnet: number; http: number };
}

/**
 * Core and a node named `sensor-1`, registered; no honeypots yet. Core stores in a database
 * file, or in PostgreSQL (alone or in a cluster) when the backend switch says so, like every
 * test Core (tests/helpers/postgres.ts); its artifacts go to this system's folder either way.
 */
export async function startSystem(overrides: Partial<CoreConfig> = {}): Promise<ConsoleSystem> {
  const dir = tempDir("honeybee-console-");
  const core = await startTestCore({ ...(onPostgres() ? {} : { db: `${dir.path}/core.db` }), artifacts_dir: `${dir.path}/artifacts`, ...overrides });
  const node = await startNode(
    {
      core: `127.0.0.1:${core.ports.node}`,
      events: `127.0.0.1:${core.ports.event}`,
      data: `${dir.path}/node`,
      name: "sensor-1",
      relay_port: 0,
      log_level: "silent",
      heartbeat_ms: 1000,
      reconnect_min_ms: 10,
      reconnect_max_ms: 200,
      ...(overrides.node_enrollment_token ? { enrollment_token: overrides.node_enrollment_token } : {}),
    },
    silentLogger(),
  );
  await until(() => core.registry.link(node.nodeId), "the node's registration");
  return {
    core,
    node,
    nodeId: String(node.nodeId),
    ports: { ssh: freePort(), telnet: freePort(), http: freePort() },
    [Symbol.asyncDispose]: async () => {
      await node.stop();
      await core.stop();
      dir[Symbol.dispose]();
    },
  };
}

/** Waits until the node reports every named pot Running. */
export const potsRunning = (core: TestCore, ids: string[]) =>
  until(
    async () => {
      const pots = (await getJson(`${core.api}/api/v1/honeypots`)).body.honeypots as { pot_id: string; status: string }[];
      return ids.every((id) => pots.some((p) => p.pot_id === id && p.status === "Running"));
    },
    `${ids.join(", ")} Running`,
    3000,
  );
