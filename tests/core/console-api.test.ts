/**
 * The REST additions the console stands on: events per minute (/api/v1/stats/timeline), the
 * token's role (/api/v1/whoami) and a node's last_seen.
 */
import { describe, expect, test } from "bun:test";
import { stringify } from "../../src/protocol/json";
import { sha256 } from "../../src/core/auth";
import { BIG_ID, EventStreamClient, getJson, registerNode, settled, startTestCore } from "../helpers";

describe("GET /api/v1/stats/timeline", () => {
  test("counts committed events per minute by their time, skipping segments older than the window", async () => {
    await using core = await startTestCore();
    const now = Date.now();
    const at = (msAgo: number) => stringify({ eventid: "t.e", timestamp: new Date(now - msAgo).toISOString() });
    using c = await EventStreamClient.connect(core.ports.event, { acks: true });
    // A first segment (4096 ids) entirely three days old, then recent events.
    const old = Array.from({ length: 4200 }, () => at(3 * 86_400_000));
    const recent = [5_000, 5_000, 70_000, 59 * 60_000, 2 * 3_600_000, 23 * 3_600_000];
    c.send([...old, ...recent.map(at)]);
    await c.ack(old.length + recent.length);
    await settled(core);

    const hour = (await getJson(`${core.api}/api/v1/stats/timeline`)).body;
    expect(hour.step_seconds).toBe(60);
    expect(hour.counts.length).toBe(60);
    const start = Date.parse(hour.start);
    const expected = (counts: number[], step: number) => {
      const out = new Array(counts.length).fill(0);
      for (const ago of recent) {
        const i = Math.floor((now - ago - start) / step);
        if (i >= 0 && i < out.length) out[i]++;
      }
      return out;
    };
    expect(hour.counts).toEqual(expected(hour.counts, 60_000));
    expect(hour.counts.reduce((a: number, b: number) => a + b, 0)).toBe(4);
    // The last step is the current minute.
    expect(start + 60 * 60_000).toBeGreaterThan(now);
    expect(start + 59 * 60_000).toBeLessThanOrEqual(now);

    const day = (await getJson(`${core.api}/api/v1/stats/timeline?window=24h&step=1h`)).body;
    expect({ step: day.step_seconds, n: day.counts.length, sum: day.counts.reduce((a: number, b: number) => a + b, 0) }).toEqual({ step: 3600, n: 24, sum: 6 });
    const week = (await getJson(`${core.api}/api/v1/stats/timeline?window=4d&step=1h`)).body;
    expect(week.counts.reduce((a: number, b: number) => a + b, 0)).toBe(4200 + 6);
  });

  test("a window of too many steps, or a step it cannot read, is a 400 that says so", async () => {
    await using core = await startTestCore();
    expect(await getJson(`${core.api}/api/v1/stats/timeline?window=7d&step=1m`)).toMatchObject({
      status: 400,
      body: { error: { code: "bad_request", message: "window / step gives 10080 steps; at most 1440: take a larger step" } },
    });
    expect((await getJson(`${core.api}/api/v1/stats/timeline?step=90s`)).body.error.message).toBe('step must be a number of minutes or hours like 1m or 1h, got "90s"');
    expect((await getJson(`${core.api}/api/v1/stats/timeline?windw=1h`)).body.error.message).toStartWith('unknown query parameter "windw"');
  });
});

test("GET /api/v1/whoami names the token and its role", async () => {
  await using open = await startTestCore();
  expect((await getJson(`${open.api}/api/v1/whoami`)).body).toEqual({ name: "anonymous", role: "operator", auth_enabled: false });
  await using core = await startTestCore({ tokens: [{ name: "rita", role: "read", sha256: sha256("r-1") }] });
  expect((await getJson(`${core.api}/api/v1/whoami`, { headers: { authorization: "Bearer r-1" } })).body).toEqual({ name: "rita", role: "read", auth_enabled: true });
  expect((await getJson(`${core.api}/api/v1/whoami`)).status).toBe(401);
});

test("a node's detail says when Core last heard from it", async () => {
  await using core = await startTestCore();
  const before = Date.now();
  const node = await registerNode(core);
  try {
    const { body } = await getJson(`${core.api}/api/v1/nodes/${BIG_ID}`);
    const seen = Date.parse(body.last_seen);
    expect(seen).toBeGreaterThanOrEqual(before - 1);
    expect(seen).toBeLessThanOrEqual(Date.now());
  } finally {
    node.socket.end();
  }
});
