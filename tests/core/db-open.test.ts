/**
 * A database file Core cannot use stops start-up with one line that names the file and says
 * what to do, not an SQLite stack trace. Real processes; the tests run as root, so an
 * unreadable file is a folder where the file should be (permissions do not stop root).
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, ROOT, tempDir } from "../helpers";

async function coreOn(db: string) {
  const proc = Bun.spawn([BUN, join(ROOT, "src", "main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", db], { stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, stdout, stderr };
}

test("a file that is not an SQLite database: one line with its path and what to do", async () => {
  using dir = tempDir();
  const db = join(dir.path, "honeybee.db");
  writeFileSync(db, Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 251)));
  const r = await coreOn(db);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr:
      `honeybee: cannot open the database ${db}: file is not a database (SQLITE_NOTADB); it is not an SQLite database or it is damaged. ` +
      `Restore it from a backup, or move it away to start with an empty one (\`sqlite3 ${db} 'PRAGMA integrity_check'\` says what is wrong)\n`,
  });
});

test("a path Core cannot open as a file: one line with its path and what to check", async () => {
  using dir = tempDir();
  const db = join(dir.path, "honeybee.db");
  mkdirSync(db);
  const r = await coreOn(db);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr:
      `honeybee: cannot open the database ${db}: unable to open database file (SQLITE_CANTOPEN); check that it is a file (not a folder) that Core's user ` +
      "can read and write, in a folder it can write (SQLite keeps the -wal and -shm files beside it)\n",
  });
});
