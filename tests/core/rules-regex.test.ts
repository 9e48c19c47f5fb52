import { describe, expect, test } from "bun:test";
import { stringify } from "../../src/protocol/json";
import { EventStreamClient, getJson, startTestCore, type TestCore } from "../helpers";
import { rulesCaughtUp, sendEvents } from "../helpers/outputs";

const post = (core: TestCore, body: unknown) => getJson(`${core.api}/api/v1/rules`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const line = (e: Record<string, unknown>) => stringify({ eventid: "cowrie.command.input", pot_id: "ssh-01", pot_type: "cowrie", src_ip: "203.0.113.7", ...e });
const onInput = (regex: string) => ({ name: "words", match: { fields: [{ field: "data.input", regex }] } });
const caughtUp = rulesCaughtUp;

/** What is slow the first time (the GeoIP databases the rules' first read opens, a first request), done before anything is measured. */
async function warmedUp(core: TestCore) {
  await sendEvents(core, [{ eventid: "cowrie.session.connect" }]);
  await caughtUp(core);
  expect((await fetch(`${core.api}/health`)).status).toBe(200);
}

/** Text of a and b without a period, so RE2's DFA meets ever new states and falls back to stepping its program. */
function aperiodic(n: number, seed: number): string {
  let x = seed;
  let s = "";
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += x & 1 ? "a" : "b";
  }
  return s;
}

describe("rule regexes", () => {
  test("attacker input against a backtracking-prone regex does not hold up ingest or /health", async () => {
    await using core = await startTestCore();
    expect((await post(core, onInput("^(\\w+\\s?)*$"))).status).toBe(201);
    await warmedUp(core);
    using attacker = await EventStreamClient.connect(core.ports.event, { acks: true });
    using other = await EventStreamClient.connect(core.ports.event, { acks: true });

    const start = performance.now();
    attacker.send([...Array.from({ length: 60 }, () => line({ input: `${"a".repeat(40)}!` })), line({ input: "cat passwd" })]);
    other.send(line({ eventid: "cowrie.login.failed", src_ip: "198.51.100.1", username: "root", password: "x" }));
    const health = fetch(`${core.api}/health`).then((r) => ({ status: r.status, ms: performance.now() - start }));
    await other.ack(1);
    const ackMs = performance.now() - start;
    const h = await health;

    expect(ackMs).toBeLessThan(100);
    expect(h.status).toBe(200);
    expect(h.ms).toBeLessThan(1000);
    await attacker.ack(61);
    await caughtUp(core);
    const alerts = (await getJson(`${core.api}/api/v1/events?event_type=alert.words`)).body.events;
    expect(alerts.map((a: any) => a.data.trigger.data.input)).toEqual(["cat passwd"]);
  });

  test("the rules give acks their turn between slow matches, not only between batches", async () => {
    await using core = await startTestCore();
    expect((await post(core, onInput("[ab]*a[ab]{60}$"))).status).toBe(201);
    await warmedUp(core);
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    c.send([...Array.from({ length: 40 }, (_, i) => line({ input: aperiodic(4096, i + 1) })), line({ eventid: "cowrie.session.closed" })]);
    await c.ack(41);
    // Acknowledged before the rules got through the events (in a cluster, before a writer even stored them).
    const positionAtAck = core.rules.status().position;
    await caughtUp(core);
    const last = (await getJson(`${core.api}/api/v1/events?event_type=cowrie.session.closed`)).body.events[0].id;
    expect(positionAtAck).toBeLessThan(last);
  });

  test("a pattern RE2 cannot run in linear time is refused when the rule is saved, naming what is not supported", async () => {
    await using core = await startTestCore();
    const refused = async (regex: string) => {
      const r = await post(core, onInput(regex));
      return [r.status, r.body?.error?.code, r.body?.error?.message];
    };
    expect(await refused("(a+)\\1")).toEqual([400, "bad_request", "invalid rule: fields: data.input: backreference `\\1` is not supported (rule regexes use RE2 syntax, which matches in linear time: no backreferences, no lookaround)"]);
    expect(await refused("(?=wget)w")).toEqual([400, "bad_request", "invalid rule: fields: data.input: lookahead `(?=` is not supported (rule regexes use RE2 syntax, which matches in linear time: no backreferences, no lookaround)"]);
    expect(await refused("(?<!x)wget")).toEqual([400, "bad_request", "invalid rule: fields: data.input: lookbehind `(?<!` is not supported (rule regexes use RE2 syntax, which matches in linear time: no backreferences, no lookaround)"]);
    expect(await refused("(wget")).toEqual([400, "bad_request", "invalid rule: fields: data.input: invalid regular expression: missing closing ): `(wget`"]);
    expect((await getJson(`${core.api}/api/v1/rules`)).body.rules).toEqual([]);
  });
});
