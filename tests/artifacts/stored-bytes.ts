/** An artifact's bytes where the backend keeps them: a file of the artifacts folder (SQLite), or artifact_chunks (PostgreSQL). */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";

export async function storedBytes(where: { pgUrl: string | null; dir: string }, sha256: string): Promise<Buffer | null> {
  if (!where.pgUrl) {
    const path = join(where.dir, "artifacts", sha256);
    return existsSync(path) ? readFileSync(path) : null;
  }
  const sql = new SQL(where.pgUrl, { max: 1 });
  try {
    const rows = await sql`select seq, data from artifact_chunks where sha256 = ${sha256} order by seq`;
    return rows.length ? Buffer.concat(rows.map((r: { data: Uint8Array }) => Buffer.from(r.data))) : null;
  } finally {
    await sql.close();
  }
}
