// Tests start real servers; keep their logs out of the test output.
process.env.HONEYBEE_LOG_LEVEL ??= "silent";

// The PostgreSQL switch's template database goes when the last test of the process is done.
if (process.env.HONEYBEE_TEST_DB === "postgres") {
  const { afterAll } = await import("bun:test");
  const { closeTestDatabases } = await import("./helpers/postgres");
  afterAll(closeTestDatabases);
}

// `npm test` (HONEYBEE_BACKEND_RUNS_EARLY): the backend runs that tests/core/postgres.test.ts
// checks start now and go on beside the rest of the suite, rather than when that file comes.
if (process.env.HONEYBEE_BACKEND_RUNS_EARLY === "1" && process.env.HONEYBEE_TEST_DB === undefined) {
  const { backendRuns } = await import("./helpers/backend-runs");
  backendRuns(true);
}

export {};
