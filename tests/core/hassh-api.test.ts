/**
 * HASSH (the SSH client fingerprint of `cowrie.client.kex`) as a filter of GET /api/v1/events and
 * a top list of GET /api/v1/stats, fed with real Cowrie 2.9 lines through the event socket.
 */
import { sqliteEventWriting } from "../../src/db/writer-channel";
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { createIngest } from "../../src/core/ingest";
import { openDatabase } from "../../src/db";
import { EventQueries } from "../../src/db/event-queries";
import { EventWriter } from "../../src/db/event-writer";
import { HourlyCounts } from "../../src/db/hourly-counts";
import { countStored } from "../../src/db/pg/event-writer";
import { silentLogger } from "../../src/log";
import { EventStreamClient, getJson, settled, startTestCore, tempDir } from "../helpers";

const SAMPLE = join(import.meta.dir, "..", "ingest", "samples", "cowrie-2.9-honeybee-output.jsonl");
const OPENSSH = "472b5de333ad665af5cbf10ff892c4df";

/** Cowrie 2.9's two kex events (Debian's OpenSSH), as of now: the stats' windows are recent hours. */
function sampleKex(): Record<string, unknown>[] {
  const now = new Date();
  return readFileSync(SAMPLE, "utf8")
    .split("\n")
    .filter((l) => l.includes('"cowrie.client.kex"'))
    .map((l) => ({ ...JSON.parse(l), timestamp: now.toISOString(), time: now.getTime() / 1000 }));
}

/** The same client told to offer one key exchange method: another fingerprint. */
function narrowed(base: Record<string, unknown>, session: string): Record<string, unknown> & { hassh: string } {
  const kexAlgs = ["diffie-hellman-group14-sha256", "ext-info-c", "kex-strict-c-v00@openssh.com"];
  const hasshAlgorithms = [kexAlgs.join(","), ...String(base.hasshAlgorithms).split(";").slice(1)].join(";");
  const hassh = createHash("md5").update(hasshAlgorithms).digest("hex");
  return { ...base, session, kexAlgs, hasshAlgorithms, hassh, message: `SSH client hassh fingerprint: ${hassh}` };
}

test("GET /api/v1/events?hassh= finds the key exchange events of one client, and the stats list the fingerprints", async () => {
  await using core = await startTestCore();
  using pot = await EventStreamClient.connect(core.ports.event, { acks: true });
  const [first, second] = sampleKex() as [Record<string, unknown>, Record<string, unknown>];
  const other = narrowed(first, "0aa1bb2cc3dd");
  const lines = [
    first,
    other,
    second,
    // Another kind's event named like Cowrie's counts too; a `hassh` on any other event does not.
    { ...other, eventid: "sshpot.client.kex", honeybee_honeypot_id: "ssh-02", honeybee_honeypot_type: "sshpot", session: "0aa1bb2cc3de" },
    { eventid: "cowrie.login.failed", username: "root", password: "x", hassh: OPENSSH, src_ip: "203.0.113.7", timestamp: new Date().toISOString(), honeybee_honeypot_id: "cowrie-lab" },
  ];
  pot.send(lines.map((l) => JSON.stringify(l)));
  await pot.ack(lines.length);
  await settled(core);

  const stats = (await getJson(`${core.api}/api/v1/stats?window=24h`)).body;
  // Equal counts: by value.
  expect(stats.top.hassh).toEqual(
    [
      { value: OPENSSH, count: 2 },
      { value: other.hassh, count: 2 },
    ].sort((a, b) => (a.value < b.value ? -1 : 1)),
  );

  const page = (await getJson(`${core.api}/api/v1/events?hassh=${OPENSSH.toUpperCase()}`)).body;
  expect(page.next_cursor).toBeNull();
  expect(page.events.map((e: any) => [e.event_type, e.data.session, e.data.hassh])).toEqual([
    ["cowrie.client.kex", second.session, OPENSSH],
    ["cowrie.client.kex", first.session, OPENSSH],
  ]);
  expect(page.events[0].data).toMatchObject({ hasshAlgorithms: second.hasshAlgorithms, kexAlgs: second.kexAlgs, langCS: [""] });

  const byType = async (query: string) => (await getJson(`${core.api}/api/v1/events?hassh=${other.hassh}${query}`)).body.events.map((e: any) => e.event_type);
  expect(await byType("")).toEqual(["sshpot.client.kex", "cowrie.client.kex"]);
  expect(await byType("&pot_type=cowrie")).toEqual(["cowrie.client.kex"]);
  expect(await byType("&event_type=cowrie.login.failed")).toEqual([]);
  expect(await byType(`&src_ip=127.0.0.1&event_type=sshpot.client.kex`)).toEqual(["sshpot.client.kex"]);

  // A page at a time, newest first, none skipped.
  const one = (await getJson(`${core.api}/api/v1/events?hassh=${OPENSSH}&limit=1`)).body;
  expect([one.events[0].data.session, one.next_cursor]).toEqual([second.session, String(one.events[0].id)]);
  const rest = (await getJson(`${core.api}/api/v1/events?hassh=${OPENSSH}&limit=1&cursor=${one.next_cursor}`)).body;
  expect(rest.events.map((e: any) => e.data.session)).toEqual([first.session]);

  const bad = await getJson(`${core.api}/api/v1/events?hassh=not-a-hash`);
  expect([bad.status, bad.body.error.code, bad.body.error.message]).toEqual([400, "bad_request", expect.stringMatching(/^query parameter hassh: .*, got "not-a-hash"$/)]);

  const doc = (await getJson(`${core.api}/swagger/json`)).body;
  expect(doc.paths["/api/v1/events"].get.parameters.find((p: any) => p.name === "hassh")).toMatchObject({ in: "query", schema: { pattern: "^[0-9a-fA-F]{32}$" } });
});

test("fingerprints a crash left uncounted are counted at the next start (SQLite)", async () => {
  using dir = tempDir();
  const path = join(dir.path, "events.db");
  const db = openDatabase(path);
  // Inline writer, counters held back as if the process died before writing them.
  const config = defaultCoreConfig({ db: path, ingest_worker: false, stats_flush_ms: 60_000, log_events: false });
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const [first, second] = sampleKex() as [Record<string, unknown>, Record<string, unknown>];
  for (const e of [first, second, narrowed(first, "0aa1bb2cc3dd"), { ...first, eventid: "cowrie.client.version" }]) ingest.submit(e, { transport: "events", remote: "t" });
  await ingest.flush();
  const q = new EventQueries(db);
  expect(q.stats(86_400_000, 5).top.hassh).toEqual([]);
  new EventWriter(db); // what a restart does
  expect(q.stats(86_400_000, 5).top.hassh).toEqual([
    { value: OPENSSH, count: 2 },
    { value: narrowed(first, "").hassh, count: 1 },
  ]);
  db.$client.close();
});

test("PostgreSQL's recount reads the fingerprint of key exchange events only", () => {
  const counts = new HourlyCounts();
  const ts = String(Date.UTC(2026, 10, 22, 1, 7));
  countStored(counts, [
    { ts, type: "cowrie.client.kex", ip: "127.0.0.1", data: JSON.stringify({ hassh: OPENSSH, kexAlgs: ["curve25519-sha256"] }) },
    { ts, type: "cowrie.client.kex", ip: "127.0.0.1", data: '{"hassh": "", "x": "\\u0000"}' },
    { ts, type: "cowrie.login.failed", ip: "127.0.0.1", data: JSON.stringify({ hassh: OPENSSH, username: "root" }) },
  ]);
  expect([...counts.entries()].filter(([kind]) => kind === "hassh")).toEqual([["hassh", Math.floor(Number(ts) / 3_600_000), OPENSSH, 1]]);
});
