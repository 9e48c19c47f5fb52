/**
 * The cost of GeoIP/ASN enrichment per event (src/geo, src/db/address-store.ts), measured where
 * it is paid: when the writer writes its counters, it looks up each distinct (hour, address)
 * of the interval (cached per address) and inserts the addresses it has not seen. The same
 * events go through Core's real pipeline (inline writer, in-memory database) with
 * `geo_enrichment` off and on, the rounds interleaved; the counters are written every
 * BENCH_GEO_FLUSH events (300,000 = one second at Core's rate, five times as often as the
 * default `stats_flush_ms`, so the figure is on the expensive side). The figure is the time
 * spent writing counters with enrichment less without, per event.
 *
 * The lookup cache lives as long as the process, as in Core: the first round pays a miss per
 * distinct address (a walk of the MMDB tree), later rounds mostly hits; both are shown. Loading the
 * data (once per process and thread) is shown apart.
 *
 *   bun bench/ingest-geo.ts      # or as part of `bun run bench ingest`
 *
 * Env: BENCH_GEO_EVENTS (1000000), BENCH_GEO_FLUSH (300000), BENCH_ROUNDS (3).
 */
import { sqliteEventWriting } from "../src/db/writer-channel";
import { defaultCoreConfig } from "../src/config";
import { MessageBus } from "../src/core/bus";
import { createIngest } from "../src/core/ingest";
import { parseEventLine } from "../src/core/ingest/parse";
import { openDatabase } from "../src/db";
import { GeoLookup, geoLookup } from "../src/geo";
import { silentLogger } from "../src/log";
import { eventLines } from "./ingest-events";
import { table } from "./lib";

const EVENTS = Number(process.env.BENCH_GEO_EVENTS ?? 1_000_000);
const FLUSH = Number(process.env.BENCH_GEO_FLUSH ?? 300_000);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

/** Milliseconds spent writing the counters over EVENTS events; the events are the same every run. */
async function countersMs(geo: boolean): Promise<number> {
  const config = defaultCoreConfig({ db: ":memory:", log_events: false, stats_flush_ms: 60_000, geo_enrichment: geo });
  const db = openDatabase(":memory:");
  const ingest = createIngest({ store: sqliteEventWriting(db, config.db), config, bus: new MessageBus(), registry: { nodeOfPot: () => null }, logger: silentLogger() });
  const make = eventLines(3, Date.now() - 3_600_000);
  let ms = 0;
  const settle = async () => {
    await ingest.flush();
    const t = performance.now();
    await ingest.countsSettled();
    ms += performance.now() - t;
  };
  for (let i = 0; i < EVENTS; i++) {
    ingest.submit(parseEventLine(make(i)), { transport: "events", remote: "bench" });
    if (i % 16_384 === 16_383) await ingest.flush();
    if (i % FLUSH === FLUSH - 1) await settle();
  }
  await settle();
  await ingest.stop();
  db.$client.close();
  return ms;
}

export async function main(): Promise<string> {
  let t = performance.now();
  // A lookup of its own: the process's shared one may have been loaded already (the prefill).
  new GeoLookup({ geoipDb: "", asnDb: "" }).lookup("8.8.8.8");
  const loadMs = performance.now() - t;
  geoLookup({ geoipDb: "", asnDb: "" }).lookup("8.8.8.8"); // loaded before the timed rounds, as Core has it after its first event
  const off: number[] = [];
  const on: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    off.push(await countersMs(false));
    on.push(await countersMs(true));
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const us = (ms: number) => ((ms * 1000) / EVENTS).toFixed(3);
  t = performance.now();
  const rows = [
    ["first round (cold lookup cache)", us(off[0]!), us(on[0]!), us(on[0]! - off[0]!)],
    [`median of ${ROUNDS}`, us(med(off)), us(med(on)), us(med(on) - med(off))],
  ];
  return [
    `GeoIP/ASN enrichment: ${EVENTS.toLocaleString("en-US")} bench events, counters written every ${FLUSH.toLocaleString("en-US")} events; ` +
      `time writing counters per event, µs (the enrichment's whole cost; goal under 0.3 µs). Loading the shipped data: ${loadMs.toFixed(0)} ms once per thread.`,
    "",
    table(["round", "enrichment off µs/event", "on µs/event", "cost µs/event"], rows),
  ].join("\n");
}

if (import.meta.main) console.log(await main());
