/**
 * A writer whose commit hangs rather than fails (a table lock held elsewhere) reports it after
 * commit_stall_ms: /health of its instance says so, and stops saying it once the commit is done.
 */
import { expect, test } from "bun:test";
import { startWriterRole } from "../../src/cluster/writer-role";
import { silentLogger } from "../../src/log";
import { ingestPipeline, sampleEvents, until, withCluster } from "./helpers";

const source = { transport: "events" as const, remote: "test" };

test("a writer whose commit hangs reports it after commit_stall_ms, and is healthy again once it commits", () =>
  withCluster(async ({ bus, pg, connect }) => {
    const writer = await startWriterRole({ bus: await connect(), pgUrl: pg.url, config: { retention_days: 0, commit_stall_ms: 200 }, logger: silentLogger() });
    const lock = await pg.sql.reserve();
    try {
      await lock`begin`;
      await lock`lock table events in access exclusive mode`;
      const ingest = ingestPipeline(bus, { batchSize: 50 });
      for (const e of sampleEvents(100)) ingest.submit(e, source);
      await ingest.flush();
      await ingest.stop();
      const problem = await until(() => writer.problem(), "the hung commit to be reported", 3000);
      expect(problem).toMatch(/^this writer has committed no events for [\d.]+ s while delivered events wait in JetStream$/);
      await lock`rollback`;
      await until(() => writer.stats.stored === 100, "the events to be stored");
      expect(writer.problem()).toBeNull();
    } finally {
      lock.release();
      await writer.stop();
    }
  }));
