import { describe, expect, test } from "bun:test";
import { statSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { TOTP_PERIOD_S, totpCode } from "../../src/protocol/totp";
import { startNode } from "../../src/node/agent";
import { silentLogger } from "../../src/log";
import { LineClient, getJson, startTestCore, tempDir, until } from "../helpers";

const ENROLL = "enroll-secret-for-tests";
const ID = 18446744073709551557n;
const reg = (extra: Record<string, unknown>) => ({ node_id: ID, node_name: "sensor", address: "127.0.0.1", port: 0, node_type: "Full", ...extra });
const step = (offset = 0) => (Math.floor(Date.now() / 1000 / TOTP_PERIOD_S) + offset) * TOTP_PERIOD_S * 1000;

async function register(port: number, extra: Record<string, unknown>) {
  const c = await LineClient.connect(port);
  c.send("NodeRegistration", reg(extra));
  const ack = await c.nextKind("RegistrationAck");
  return { c, ack };
}

async function enroll(port: number): Promise<string> {
  const { c, ack } = await register(port, { enrollment_token: ENROLL });
  expect(ack).toMatchObject({ node_id: ID, accepted: true, message: "registered and enrolled" });
  c.close();
  return ack.totp_key;
}

describe("node enrollment and TOTP", () => {
  test("first registration needs the enrollment token and gets a per-node secret", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL });
    const none = await register(core.ports.node, {});
    expect(none.ack).toMatchObject({ accepted: false, message: expect.stringContaining("not enrolled") });
    await none.c.closed;
    const wrong = await register(core.ports.node, { enrollment_token: "guess" });
    expect(wrong.ack.accepted).toBe(false);
    const key = await enroll(core.ports.node);
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    const ok = await register(core.ports.node, { totp_code: totpCode(key, step()) });
    expect(ok.ack).toEqual({ node_id: ID, accepted: true, message: "registered" });
    ok.c.close();
  });

  test("takeover, wrong, expired and replayed codes are refused; one step of drift is allowed", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL, auth_failures_per_minute: 100 });
    const key = await enroll(core.ports.node);
    const cases: [string, Record<string, unknown>, boolean, RegExp][] = [
      ["takeover with the enrollment token", { enrollment_token: ENROLL }, false, /present a TOTP code/],
      ["a wrong code", { totp_code: "000000" === totpCode(key, step()) ? "111111" : "000000" }, false, /invalid or expired/],
      ["an expired code", { totp_code: totpCode(key, step(-3)) }, false, /invalid or expired/],
      ["the previous step (drift)", { totp_code: totpCode(key, step(-1)) }, true, /^registered$/],
      ["the current step", { totp_code: totpCode(key, step()) }, true, /^registered$/],
      ["the current step again (replay)", { totp_code: totpCode(key, step()) }, false, /already used/],
      ["the next step (drift)", { totp_code: totpCode(key, step(1)) }, true, /^registered$/],
    ];
    for (const [what, extra, accepted, message] of cases) {
      const { c, ack } = await register(core.ports.node, extra);
      expect({ what, accepted: ack.accepted }).toEqual({ what, accepted });
      expect(ack.message).toMatch(message);
      c.close();
    }
  });

  test("failed registrations are rate-limited per address", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL, auth_failures_per_minute: 3 });
    const messages: string[] = [];
    for (let i = 0; i < 5; i++) messages.push((await register(core.ports.node, { enrollment_token: `guess-${i}` })).ack.message);
    expect(messages.slice(3)).toEqual(Array(2).fill("too many failed registrations from 127.0.0.1; retry later"));
    // Even the right token waits out the lock.
    expect((await register(core.ports.node, { enrollment_token: ENROLL })).ack.accepted).toBe(false);
  });
});

describe("event socket with node authentication", () => {
  test("unauthenticated lines are refused; a hello with a valid code is acknowledged", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL });
    const key = await enroll(core.ports.node);
    const anon = await LineClient.connect(core.ports.event);
    anon.sendRaw('{"eventid":"cowrie.login.failed","src_ip":"203.0.113.9","pot_id":"p"}\n');
    expect(await anon.nextKind("Error")).toMatchObject({ code: "unauthenticated" });
    await anon.closed;
    const bad = await LineClient.connect(core.ports.event);
    bad.send("EventStreamHello", { node_id: ID, acks: true, totp_code: "123456" === totpCode(key, step()) ? "654321" : "123456" });
    expect(await bad.nextKind("Error")).toMatchObject({ code: "unauthenticated", message: expect.stringContaining("invalid") });
    await bad.closed;
    using good = await LineClient.connect(core.ports.event);
    good.send("EventStreamHello", { node_id: ID, acks: true, totp_code: totpCode(key, step()) });
    good.sendRaw('{"eventid":"cowrie.login.failed","src_ip":"203.0.113.9","pot_id":"p"}\n');
    expect(await good.nextKind("EventAck")).toEqual({ seq: 1 });
  });

  test("events_loopback_unauthenticated accepts lines from loopback", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL, events_loopback_unauthenticated: true });
    using anon = await LineClient.connect(core.ports.event);
    anon.send("EventStreamHello", { acks: true });
    anon.sendRaw('{"eventid":"cowrie.login.failed","src_ip":"203.0.113.9","pot_id":"p"}\n');
    expect(await anon.nextKind("EventAck")).toEqual({ seq: 1 });
  });
});

describe("the node agent with node authentication", () => {
  test("enrolls once, keeps its secret 0600, and comes back with TOTP after a restart", async () => {
    await using core = await startTestCore({ node_enrollment_token: ENROLL });
    using dir = tempDir();
    const config = { core: `127.0.0.1:${core.ports.node}`, events: `127.0.0.1:${core.ports.event}`, data: dir.path, name: "auth-node", relay_port: 0, log_level: "silent" as const, heartbeat_ms: 50, reconnect_min_ms: 10, reconnect_max_ms: 100 };
    const registered = () => {
      const { promise, resolve } = Promise.withResolvers<void>();
      const off = core.bus.subscribe((m) => m.kind === "NodeRegistration" && (off(), resolve()));
      return promise;
    };
    let seen = registered();
    const first = await startNode({ ...config, enrollment_token: ENROLL }, silentLogger());
    await seen;
    const keyFile = join(dir.path, "totp_key");
    await until(() => statSync(keyFile, { throwIfNoEntry: false }), "the key file");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile, "utf8").trim()).toMatch(/^[A-Z2-7]{32}$/);
    await first.stop();
    // Restarted without the enrollment token: TOTP alone must do.
    seen = registered();
    const second = await startNode(config, silentLogger());
    try {
      await seen;
      expect((await getJson(`${core.api}/api/v1/nodes/${second.nodeId}`)).body.status).not.toBe("Unknown");
    } finally {
      await second.stop();
    }
  });
});
