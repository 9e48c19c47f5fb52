/**
 * Core's PostgreSQL event writer when the server is away as it opens (Core started, or the
 * server stopped while the writer loaded): writes fail and are retried, and once the server is
 * back they commit; nothing is left rejected for good.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { defaultCoreConfig } from "../../src/config";
import { MessageBus } from "../../src/core/bus";
import { EventPipeline } from "../../src/core/ingest/pipeline";
import { pgWriter } from "../../src/db/pg/writer-channel";
import { openPgDatabase } from "../../src/db/pg";
import { silentLogger } from "../../src/log";
import { until } from "../helpers";
import { startPrivatePg } from "../helpers/private-pg";

test("a PostgreSQL writer that could not open commits once the server is back", async () => {
  await using pg = await startPrivatePg();
  await (await openPgDatabase(pg.url)).$client.close();
  await pg.stop();
  const pipeline = new EventPipeline({
    config: defaultCoreConfig({ batch_size: 10, batch_delay_ms: 1, log_events: false }),
    writer: pgWriter(pg.url),
    bus: new MessageBus(),
    logger: silentLogger(),
    nodeOfPot: () => null,
    dictionaries: { sources: [], types: [] },
    retryMs: 10,
  });
  for (let i = 0; i < 5; i++) expect(pipeline.submit({ eventid: "outage.event", src_ip: "10.0.0.1" }, { remote: "test", transport: "events" })).toBeNull();
  await until(() => pipeline.problem(), "the failed writes to be reported");
  await pg.start();
  await pipeline.flush();
  expect(pipeline.problem()).toBeNull();
  await pipeline.stop();
  const sql = new SQL(pg.url, { max: 1 });
  try {
    expect((await sql`select count(*)::int as n from events`)[0].n).toBe(5);
  } finally {
    await sql.close();
  }
});
