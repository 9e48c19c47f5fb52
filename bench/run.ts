export {};
/**
 * `bun run bench`: every benchmark, each reported as ratios to a baseline measured in the same
 * run (these machines are shared and noisy). Pick parts with `bun run bench rest feed ingest`;
 * `bun run bench growth` (database growth, long), `flood` (memory under floods on the control
 * channel), `pg`, `artifacts` and `cluster` (need PostgreSQL, and NATS) run only when named.
 * Sizes are set by environment variables; see each part's header.
 */
const parts = process.argv.slice(2);
const want = (name: string) => parts.length === 0 || parts.includes(name);

if (want("rest")) {
  const { benchRest } = await import("./rest");
  console.log("## REST (GET /health and the lists: 100 nodes x 10 honeypots, 1,000 events; load from wrk; CPU per request from /proc)\n");
  console.log(await benchRest());
  console.log();
}
if (want("ingest")) {
  const { main: benchIngest } = await import("./ingest");
  console.log("## Event ingestion (producer processes -> event socket -> SQLite)\n");
  console.log(await benchIngest());
  console.log();
}
if (parts.includes("growth")) {
  // Not part of a plain `bun run bench`: it writes tens of GB and takes a quarter of an hour.
  const { benchGrowth } = await import("./growth");
  console.log("## Growth (ingest and REST latency as the database grows)\n");
  console.log(await benchGrowth());
  console.log();
}
if (parts.includes("flood")) {
  // Only when named: Core's memory under floods of large messages on the control channel.
  const { benchFlood } = await import("./flood");
  console.log("## Memory under a flood on the control channel (8 nodes, large PotLogs; peak RSS however Core is started)\n");
  console.log(await benchFlood());
  console.log();
}
if (parts.includes("pg")) {
  // Needs a PostgreSQL server (docs/scale-out.md): only when named.
  const { benchPg } = await import("./pg");
  console.log("## PostgreSQL event writer (COPY vs multi-row INSERT, naive baseline, SQLite)\n");
  console.log(await benchPg());
  console.log();
}
if (parts.includes("artifacts")) {
  // Needs a PostgreSQL server: only when named.
  const { benchArtifacts } = await import("./artifacts");
  console.log("## Artifacts (store and read back: SQLite with a file vs PostgreSQL artifact_chunks)\n");
  console.log(await benchArtifacts());
  console.log();
}
if (parts.includes("cluster")) {
  // Needs PostgreSQL and NATS JetStream (docs/scale-out.md): only when named.
  const { benchCluster } = await import("./cluster");
  console.log("## Cluster (ingest and writer processes on PostgreSQL and NATS; writer lag under overload; feed across instances)\n");
  console.log(await benchCluster());
  console.log();
}
if (want("feed")) {
  const { benchFeed } = await import("./feed");
  console.log("## Live feed (ingest rate raised until fan-out to WebSocket subscribers falls behind)\n");
  console.log(await benchFeed());
  console.log();
}
