/**
 * Event times far off (1970, 9999, older than the retention) are stored at their receive time
 * with what the event said kept in data (docs/protocol.md, "Events"), whatever the path: flat
 * lines on 9100, PotLog and PotEvent on 9001. Alerts carry Core's time.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BIG_ID, getJson, registerNode, startTestCore, tempDir, until, type TestCore } from "../helpers";
import { sendEvents, waitFor } from "../helpers/outputs";
import { goPotLog } from "../helpers/go-node";

const EPOCH = "1970-01-01T00:00:01Z";
const NEVER = "9999-12-31T23:59:59Z";
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const events = async (core: TestCore, query = "") => (await getJson(`${core.api}/api/v1/events?limit=100${query}`)).body.events as any[];
const bySource = (list: any[]): Record<string, any> => Object.fromEntries(list.map((e) => [e.src_ip, e]));

/** Sends the same login from `src_ip` on each path at `timestamp`; resolves once all are stored. */
async function onEveryPath(core: TestCore, ips: { flat: string; potlog: string; potevent: string }, timestamp: string) {
  await sendEvents(core, [{ src_ip: ips.flat, username: "root", password: "x", timestamp }]);
  using node = await registerNode(core);
  node.send("PotLog", goPotLog({ eventid: "cowrie.login.failed", src_ip: ips.potlog, username: "root", password: "x", timestamp }, { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie" }));
  node.send("PotEvent", { node_id: BIG_ID, pot_id: "ssh-01", pot_type: "cowrie", event_type: "cowrie.login.failed", timestamp, data: { src_ip: ips.potevent, username: "root", password: "x" } });
  await until(async () => (await events(core, "&event_type=cowrie.login.failed")).filter((e) => Object.values(ips).includes(e.src_ip)).length === 3, `the events stamped ${timestamp}`);
}

describe("event times far off", () => {
  test("1970 and 9999 are stored at the receive time on every path; the alert they raise has Core's time and the event's beside it; indicators' first and last seen are now", async () => {
    await using core = await startTestCore({ rules: [{ name: "any-login", match: { event_type: "cowrie.login.failed" }, cooldown_ms: 0 }] });
    const before = Date.now();
    const past = { flat: "198.51.100.1", potlog: "198.51.100.2", potevent: "198.51.100.3" };
    const future = { flat: "198.51.100.11", potlog: "198.51.100.12", potevent: "198.51.100.13" };
    await onEveryPath(core, past, EPOCH);
    await onEveryPath(core, future, NEVER);
    const after = Date.now();
    const stored = bySource(await events(core, "&event_type=cowrie.login.failed"));
    for (const [ips, said] of [[past, EPOCH], [future, NEVER]] as const) {
      for (const ip of Object.values(ips)) {
        const e = stored[ip];
        expect({ ip, said: e.data.timestamp }).toEqual({ ip, said });
        expect(Date.parse(e.timestamp)).toBeGreaterThanOrEqual(before - 1000);
        expect(Date.parse(e.timestamp)).toBeLessThanOrEqual(after);
      }
    }

    const alerts = bySource(await waitFor(async () => {
      const list = await events(core, "&event_type=alert.any-login");
      return list.length === 6 && list;
    }, "six alerts"));
    const raised = Date.now();
    for (const ip of [...Object.values(past), ...Object.values(future)]) {
      const a = alerts[ip];
      expect(Date.parse(a.timestamp)).toBeGreaterThanOrEqual(Date.parse(stored[ip].timestamp));
      expect(Date.parse(a.timestamp)).toBeLessThanOrEqual(raised);
      expect(a.data.trigger).toMatchObject({ id: stored[ip].id, timestamp: stored[ip].timestamp, data: { timestamp: stored[ip].data.timestamp } });
    }

    // First and last seen are to the hour: the hour each address was received in.
    const { indicators } = (await getJson(`${core.api}/api/v1/indicators?window=366d`)).body;
    const seen = Object.fromEntries((indicators as any[]).map((i) => [i.ip, [Date.parse(i.first_seen), Date.parse(i.last_seen)]]));
    const hour = Math.floor(before / HOUR) * HOUR;
    for (const ip of [...Object.values(past), ...Object.values(future)]) {
      const [first, last] = seen[ip] ?? [];
      expect({ ip, first: first! >= hour && first! <= after, last: last! >= hour && last! <= Date.now() }).toEqual({ ip, first: true, last: true });
    }
  });

  test("retention neither drops an event stamped 1970 nor keeps one stamped 9999, and takes a spool's hours-old events as they are", async () => {
    using dir = tempDir();
    const db = join(dir.path, "core.db");
    const old = new Date(Date.now() - 3 * DAY).toISOString();
    const before = Date.now();
    {
      await using core = await startTestCore({ db });
      await sendEvents(core, [
        { src_ip: "198.51.100.21", timestamp: EPOCH },
        { src_ip: "198.51.100.22", timestamp: NEVER },
        { src_ip: "198.51.100.23", timestamp: old },
      ]);
    }
    // Retention of a day: the 3-day-old event goes at start; the other two were received now.
    await using core = await startTestCore({ db, retention_days: 1 });
    await waitFor(async () => (await events(core)).length === 2, "the 3-day-old event deleted");
    const left = bySource(await events(core));
    expect(Object.keys(left).sort()).toEqual(["198.51.100.21", "198.51.100.22"]);
    for (const e of Object.values(left)) {
      expect(Date.parse(e.timestamp)).toBeGreaterThanOrEqual(before - 1000);
      expect(Date.parse(e.timestamp)).toBeLessThanOrEqual(Date.now());
    }

    // With retention on, what is older than it on arrival is stored at its receive time (not
    // deleted at the next sweep); hours old, as a node's spool after an outage, keeps its time.
    const hoursAgo = new Date(Date.now() - 5 * HOUR).toISOString();
    const received = Date.now();
    await sendEvents(core, [
      { src_ip: "198.51.100.31", timestamp: old },
      { src_ip: "198.51.100.32", timestamp: hoursAgo },
    ]);
    const now = bySource(await events(core));
    expect(now["198.51.100.32"].timestamp).toBe(hoursAgo);
    expect(now["198.51.100.31"].data.timestamp).toBe(old);
    expect(Date.parse(now["198.51.100.31"].timestamp)).toBeGreaterThanOrEqual(received - 1000);
  });
});

test("an artifact sighting stamped 1970 is dated when Core heard of it", async () => {
  await using core = await startTestCore({ retention_days: 30 });
  using node = await registerNode(core);
  const sha256 = "a".repeat(64);
  const before = Date.now();
  for (const [id, seen_at] of [["s1", EPOCH], ["s2", new Date(before - 40 * DAY).toISOString()]]) {
    node.send("FileOffer", { sha256, size: 10, kind: "artifact", sighting_id: id, meta: { source: "cowrie.session.file_download", seen_at } });
    await node.nextKind("FileStatus");
  }
  const a = (await getJson(`${core.api}/api/v1/artifacts/${sha256}`)).body;
  for (const t of [a.first_seen, a.last_seen, ...a.sightings.map((s: any) => s.seen_at)]) expect(Date.parse(t)).toBeGreaterThanOrEqual(before - 1000);
  expect(a.sightings).toHaveLength(2);
});
