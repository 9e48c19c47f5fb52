/**
 * A database file Core cannot use stops start-up with one line that names the file and says
 * what to do, not an SQLite stack trace. Real processes; the tests run as root, so an
 * unreadable file is a folder where the file should be, and a read-only one is on a read-only
 * bind mount in a mount namespace of Core's own (permissions do not stop root).
 */
import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/db";
import { BUN, ROOT, tempDir } from "../helpers";

/** Core on `db`; `readOnly` (a file or a folder) is read-only for it, even as root. */
async function coreOn(db: string, readOnly?: string) {
  const core = [BUN, join(ROOT, "src", "main.ts"), "core", "--node-port", "0", "--api-port", "0", "--ws-port", "0", "--event-port", "0", "--db", db];
  const argv = readOnly ? ["unshare", "-rm", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"', readOnly, ...core] : core;
  const proc = Bun.spawn(argv, { stdout: "pipe", stderr: "pipe" });
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

test("a database file Core may read but not write: one line, before anything is written", async () => {
  using dir = tempDir();
  const db = join(dir.path, "honeybee.db");
  openDatabase(db).$client.close();
  // A close with statements not yet finalized lets go of the file when they are collected:
  // until then Core, in its own process, would find the file locked (SQLITE_BUSY, seen once
  // under a loaded CI run) rather than read-only.
  Bun.gc(true);
  // SQLite opens such a file read-only without a word; the first write would fail later.
  const r = await coreOn(db, db);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr: `honeybee: cannot open the database ${db}: attempt to write a readonly database (SQLITE_READONLY); Core must be able to write it: check its permissions and that the file system is not mounted read-only\n`,
  });
});

test("a new database in a read-only folder, or in a folder that cannot be made there: one line", async () => {
  using dir = tempDir();
  const inside = join(dir.path, "honeybee.db");
  expect(await coreOn(inside, dir.path)).toEqual({
    code: 1,
    stdout: "",
    stderr:
      `honeybee: cannot open the database ${inside}: unable to open database file (SQLITE_CANTOPEN); check that it is a file (not a folder) that Core's user ` +
      "can read and write, in a folder it can write (SQLite keeps the -wal and -shm files beside it)\n",
  });
  const below = join(dir.path, "data", "honeybee.db");
  expect(await coreOn(below, dir.path)).toEqual({
    code: 1,
    stdout: "",
    stderr: `honeybee: cannot create the folder ${join(dir.path, "data")} for the database ${below}: read-only file system (EROFS); give Core a folder it can write, or another path with --db\n`,
  });
});
