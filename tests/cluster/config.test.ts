/**
 * Settings of several instances that cannot work are refused at start with the setting named,
 * before anything listens (docs/scale-out.md).
 */
import { expect, test } from "bun:test";
import { ConfigError, loadCoreConfig } from "../../src/config";
import { startCore } from "../../src/core";
import { silentLogger } from "../../src/log";
import { BUN, ROOT } from "../helpers";

const start = (o: Record<string, unknown>) => startCore({ host: "127.0.0.1", node_port: 0, api_port: 0, ws_port: 0, event_port: 0, db: ":memory:", ...o }, silentLogger());

test("roles other than all four need the bus", async () => {
  const e = await start({ roles: "ingest,api" }).catch((err) => err);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toContain("need the bus");
});

test("the bus needs PostgreSQL", async () => {
  const e = await start({ bus: "nats://127.0.0.1:4222" }).catch((err) => err);
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toContain("PostgreSQL");
});

test("an unknown role or a cluster name with a dot is a config error naming the setting", () => {
  expect(() => loadCoreConfig({ roles: "ingest,reader" }, {})).toThrow(/roles/);
  expect(() => loadCoreConfig({ cluster: "a.b" }, {})).toThrow(/cluster/);
});

test("honeybee core --roles writer without --bus exits 1 (a bad setting) with one line that says why", async () => {
  const proc = Bun.spawn([BUN, "src/main.ts", "core", "--roles", "writer", "--db", ":memory:"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(code).toBe(1);
  expect(out + err).toContain("need the bus");
});
