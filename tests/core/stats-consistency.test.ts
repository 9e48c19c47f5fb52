/**
 * `stats` counts an event as soon as `events` shows it: the hourly counters are written in
 * bulk (every `stats_flush_ms`), and a stats read brings them up to every committed event.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { EventStreamClient, getJson, startTestCore, tempDir, until } from "../helpers";
import { onPostgres } from "../helpers/postgres";

for (const ingest_worker of [true, false]) {
  test(`as soon as GET /api/v1/events shows events, GET /api/v1/stats counts them (writer ${ingest_worker ? "thread" : "inline"})`, async () => {
    using dir = tempDir();
    // The default flush interval: the counters are not written on their own during this test.
    // On PostgreSQL (the test switch) the database is the switch's and the writer always inline.
    await using core = await startTestCore({ ...(onPostgres() ? {} : { db: join(dir.path, "core.db") }), ingest_worker, stats_flush_ms: 5000 });
    using honeypot = await EventStreamClient.connect(core.ports.event);
    const attempts = [
      { username: "root", password: "123456", src_ip: "203.0.113.7" },
      { username: "root", password: "admin", src_ip: "203.0.113.7" },
      { username: "admin", password: "123456", src_ip: "198.51.100.9" },
    ];
    const top = (counts: Record<string, number>) => Object.entries(counts).map(([value, count]) => ({ value, count }));
    const expected = [
      { total: 1, top: { src_ips: top({ "203.0.113.7": 1 }), usernames: top({ root: 1 }), passwords: top({ "123456": 1 }), event_types: top({ "cowrie.login.failed": 1 }), countries: [], asns: [], commands: [], credentials: top({ "root / 123456": 1 }), hassh: [] } },
      { total: 3, top: { src_ips: top({ "203.0.113.7": 2, "198.51.100.9": 1 }), usernames: top({ root: 2, admin: 1 }), passwords: top({ "123456": 2, admin: 1 }), event_types: top({ "cowrie.login.failed": 3 }), countries: [], asns: [], commands: [], credentials: top({ "admin / 123456": 1, "root / 123456": 1, "root / admin": 1 }), hassh: [] } },
    ];
    const line = (a: (typeof attempts)[number]) => JSON.stringify({ eventid: "cowrie.login.failed", timestamp: new Date().toISOString(), honeybee_honeypot_id: "ssh-01", ...a });
    for (const [round, lines] of [[line(attempts[0]!)], attempts.slice(1).map(line)].entries()) {
      honeypot.send(lines);
      const want = expected[round]!;
      await until(async () => (await getJson(`${core.api}/api/v1/events?limit=10`)).body.events.length === want.total, `${want.total} events in GET /api/v1/events`);
      // No waiting here: the events are shown, so they are counted.
      const stats = (await getJson(`${core.api}/api/v1/stats`)).body;
      expect({ total: stats.total_events, window: stats.window_events, top: stats.top }).toEqual({ total: want.total, window: want.total, top: want.top });
    }
  });
}
