// Tests start real servers; keep their logs out of the test output.
process.env.HONEYBEE_LOG_LEVEL ??= "silent";
