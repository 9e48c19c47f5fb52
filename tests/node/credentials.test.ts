/**
 * The node's TOTP steps (src/node/credentials.ts): a step is spent only when Core accepted it,
 * or may have (an attempt with no answer); a refused attempt leaves the next code at the
 * clock, and a code is never further ahead than the one step of drift Core allows.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TOTP_PERIOD_S, totpCode } from "../../src/protocol/totp";
import { createLogger } from "../../src/log";
import { startNode } from "../../src/node/agent";
import { NodeCredentials } from "../../src/node/credentials";
import { LineClient, startTestCore, tempDir, until } from "../helpers";
import { FAST } from "./node-helpers";

const ENROLL = "enroll-secret-for-tests";
const KEY = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const PERIOD_MS = TOTP_PERIOD_S * 1000;
/** 10 s into a step. */
const STEP = 59_000_000;
const codeOf = (step: number) => ({ totp_code: totpCode(KEY, step * PERIOD_MS) });

describe("the node's TOTP steps", () => {
  test("refused attempts in a row do not move the next code ahead of the clock", () => {
    using dir = tempDir();
    const now = STEP * PERIOD_MS + 10_000;
    const creds = new NodeCredentials(dir.path, ENROLL, () => now);
    expect(creds.registration()).toEqual({ enrollment_token: ENROLL });
    creds.accept(KEY);
    for (let i = 0; i < 20; i++) {
      creds.registration();
      creds.refused("control");
      creds.hello();
      creds.refused("events");
    }
    expect({ control: creds.registration(), events: creds.hello() }).toEqual({ control: codeOf(STEP), events: codeOf(STEP) });
  });

  test("a step Core accepted, or may have (no answer), is not used again; past the drift the node waits for the next step", () => {
    using dir = tempDir();
    let now = STEP * PERIOD_MS + 10_000;
    const creds = new NodeCredentials(dir.path, "", () => now);
    creds.accept(KEY);
    expect(creds.registration()).toEqual(codeOf(STEP));
    creds.accept(undefined);
    expect(creds.readyIn("control")).toBe(0);
    // Sent, and the connection lost before Core answered.
    expect(creds.registration()).toEqual(codeOf(STEP + 1));
    expect(creds.readyIn("control")).toBe(20_000);
    now += 20_000;
    expect({ wait: creds.readyIn("control"), code: creds.registration() }).toEqual({ wait: 0, code: codeOf(STEP + 2) });
    // A restarted node goes on from what it spent.
    const restarted = new NodeCredentials(dir.path, "", () => now);
    expect({ control: restarted.readyIn("control"), events: restarted.readyIn("events") }).toEqual({ control: PERIOD_MS, events: 0 });
  });

  test("while enrolling, the event stream waits for the registration; a Core that asks for no enrollment lets it go", () => {
    using dir = tempDir();
    const now = STEP * PERIOD_MS + 10_000;
    const enrolling = new NodeCredentials(dir.path, ENROLL, () => now);
    const waits = () => ({ control: enrolling.readyIn("control"), events: enrolling.readyIn("events") });
    expect(waits()).toEqual({ control: 0, events: PERIOD_MS });
    enrolling.accept(KEY);
    expect(waits()).toEqual({ control: 0, events: 0 });
    using other = tempDir();
    const open = new NodeCredentials(other.path, ENROLL, () => now);
    open.accept(undefined);
    expect({ events: open.readyIn("events"), hello: open.hello() }).toEqual({ events: 0, hello: {} });
  });

  test("a state file that ran ahead of the clock (an older node) is brought back within the drift", () => {
    using dir = tempDir();
    const now = STEP * PERIOD_MS + 10_000;
    writeFileSync(join(dir.path, "totp_key"), `${KEY}\n`);
    writeFileSync(join(dir.path, "totp_state"), JSON.stringify({ control: STEP + 40, events: STEP + 40 }));
    const creds = new NodeCredentials(dir.path, "", () => now);
    expect({ wait: creds.readyIn("control"), code: creds.registration() }).toEqual({ wait: 20_000, code: codeOf(STEP + 1) });
  });
});

describe("a node that Core refuses again and again", () => {
  test("spends no step on the refusals: restarted, it is accepted at once by a Core that does not refuse it, on both channels", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    const enrolling = await startTestCore({ db, node_enrollment_token: ENROLL });
    const ports = { node_port: enrolling.ports.node, event_port: enrolling.ports.event };
    const config = { core: `127.0.0.1:${ports.node_port}`, events: `127.0.0.1:${ports.event_port}`, data: join(dir.path, "node"), name: "refused", relay_port: 0, ...FAST };
    const enrolled = await startNode({ ...config, enrollment_token: ENROLL }, createLogger("silent"));
    await enrolled.registered();
    await enrolled.stop();
    await enrolling.stop();
    const strict = await startTestCore({ db, ...ports, node_enrollment_token: ENROLL, auth_failures_per_minute: 1 });
    // One failure from the node's address spends the only token: Core refuses whatever it presents.
    using guess = await LineClient.connect(strict.ports.node);
    guess.send("NodeRegistration", { node_id: 1n, node_name: "guess", address: "127.0.0.1", port: 0, node_type: "Full", enrollment_token: "guess" });
    expect((await guess.nextKind("RegistrationAck")).accepted).toBe(false);

    const nodeLog: string[] = [];
    const refused = await startNode(config, createLogger("info", { destination: { write: (text: string) => void nodeLog.push(...text.split("\n")) } }));
    const count = (what: string) => nodeLog.filter((l) => l.includes(what)).length;
    try {
      await until(() => count("Core refused the registration") >= 10 && count("Core's event socket reported") >= 10, "ten refusals on each channel");
    } finally {
      await refused.stop();
    }
    await strict.stop();
    const coreLog: any[] = [];
    await using second = await startTestCore({ db, ...ports, node_enrollment_token: ENROLL }, createLogger("info", { destination: { write: (text: string) => void coreLog.push(...text.split("\n").filter(Boolean).map((l) => JSON.parse(l))) } }));
    const node = await startNode(config, createLogger("silent"));
    try {
      await until(() => coreLog.some((l) => l.msg === "node registered"), "the restarted Core to accept the node");
      using pot = await LineClient.connect(node.ports.relay);
      pot.sendRaw(`${JSON.stringify({ eventid: "test.refused", pot_id: "gen", src_ip: "203.0.113.7" })}\n`);
      await until(() => node.relay.counters.accepted >= 1, "the event at the relay");
      await node.forwarder.drained();
      expect({ refused: coreLog.filter((l) => /refused/.test(l.msg ?? "")).map((l) => l.msg), on: second.ports.node }).toEqual({ refused: [], on: ports.node_port });
    } finally {
      await node.stop();
    }
  });
});
