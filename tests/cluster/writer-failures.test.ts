/**
 * Writers that die or cannot commit (src/cluster/writer-role.ts), on the machine's PostgreSQL
 * and NATS: a writer killed between its commit and its acknowledgement, and commits that fail
 * for a while. (PostgreSQL or NATS servers that stop are for private servers, not these.)
 */
import { expect, test } from "bun:test";
import { startWriterRole } from "../../src/cluster/writer-role";
import { createLogger, silentLogger } from "../../src/log";
import { BUN, ROOT } from "../helpers";
import { ingestPipeline, NATS_URL, sampleEvents, until, withCluster } from "./helpers";

const source = { transport: "events" as const, remote: "test" };

test("a writer killed after its commit, before its acknowledgement: another stores the rest and each event once", () =>
  withCluster(async ({ bus, cluster, pg }) => {
    const child = Bun.spawn([BUN, "tests/fixtures/cluster-writer.ts", NATS_URL, cluster, pg.url], { cwd: ROOT, stdout: "pipe", stderr: "inherit" });
    let out = "";
    const reader = child.stdout.getReader();
    const read = async (what: RegExp) => {
      while (!what.test(out)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the writer process ended: ${out}`);
        out += new TextDecoder().decode(value);
      }
      return what.exec(out)!;
    };
    try {
      await read(/started/);
      const ingest = ingestPipeline(bus, { batchSize: 50 });
      for (const e of sampleEvents(500)) ingest.submit(e, source);
      await ingest.flush();
      // Its first commit: the messages waiting when it started, one or all ten (a writer that
      // finds several waiting commits them together).
      const committed = Number((await read(/committed (\d+)/))[1]);
      expect(committed % 50 === 0 && committed >= 50 && committed <= 500).toBe(true);
      child.kill("SIGKILL");
      await child.exited;
      const other = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger: silentLogger() });
      try {
        // The killed writer's batch comes back after ack_wait; its events are stored already.
        await until(() => other.stats.stored + other.stats.duplicates === 500, "every batch handled", 60_000);
        expect(other.stats).toMatchObject({ stored: 500 - committed, duplicates: committed });
        const [r] = await pg.sql`select count(*)::int as n, count(distinct data)::int as d, max(id)::int as hi from events`;
        expect(r).toEqual({ n: 500, d: 500, hi: 500 });
      } finally {
        await other.stop();
        await ingest.stop();
      }
    } finally {
      child.kill("SIGKILL");
    }
  }));

test("commits that fail are retried with the batch held; the writer says so once, and once when it works again", () =>
  withCluster(async ({ bus, pg }) => {
    const lines: any[] = [];
    const logger = createLogger("info", { destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    const writer = await startWriterRole({ bus, pgUrl: pg.url, config: { retention_days: 0 }, logger, retryMs: { first: 20, max: 100 } });
    try {
      // The idempotency table gone for a while: every commit fails (not a refusal of the data).
      await pg.sql`alter table event_keys rename to event_keys_away`;
      const ingest = ingestPipeline(bus, { batchSize: 20 });
      for (const e of sampleEvents(100)) ingest.submit(e, source);
      // JetStream has them: the senders' acknowledgements do not wait for PostgreSQL.
      await ingest.flush();
      expect(ingest.counters.committed).toBe(100);
      await until(() => writer.problem(), "the writer to report its problem");
      expect(writer.problem()).toMatch(/^committing events to PostgreSQL fails: .*event_keys/);
      // Several attempts fail meanwhile; the batch stays with this writer (it tells JetStream it works on it).
      await until(() => writer.stats.retries >= 3, "three failed attempts");
      await pg.sql`alter table event_keys_away rename to event_keys`;
      await until(() => writer.stats.stored === 100, "100 stored");
      expect(writer.problem()).toBeNull();
      expect(writer.stats).toMatchObject({ duplicates: 0, rejected: 0 });
      const msgs = lines.map((l) => l.msg);
      expect(msgs.filter((m) => /committing events to PostgreSQL fails/.test(m)).length).toBe(1);
      expect(msgs.filter((m) => m === "committing events to PostgreSQL works again").length).toBe(1);
      const [r] = await pg.sql`select count(*)::int as n from events`;
      expect(r.n).toBe(100);
      await ingest.stop();
    } finally {
      await writer.stop();
    }
  }));
