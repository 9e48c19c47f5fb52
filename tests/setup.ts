// Tests start real servers; keep their logs out of the test output.
process.env.HONEYBEE_LOG_LEVEL ??= "silent";

// The PostgreSQL switch's template database goes when the last test of the process is done.
if (process.env.HONEYBEE_TEST_DB === "postgres") {
  const { afterAll } = await import("bun:test");
  const { closeTestDatabases } = await import("./helpers/postgres");
  afterAll(closeTestDatabases);
}

export {};
