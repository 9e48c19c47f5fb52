/**
 * `bun run bench artifacts`: storing an artifact and reading it back, on SQLite (the bytes a file
 * of the artifacts folder) and on PostgreSQL (artifact_chunks), through the stores Core uses
 * (src/db/artifact-store.ts, src/db/pg/artifact-store.ts). "store" starts from the verified
 * file the transfer left (the same on both); "read" takes every byte as a download does;
 * "download" is the whole encrypted zip REST answers. Sizes in MiB from ARTIFACT_BENCH_MIB
 * (default 5,32), the median of ARTIFACT_BENCH_ROUNDS (default 5). Needs a PostgreSQL server.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encryptedZip } from "../src/modules/artifacts/zip";
import { openDatabase } from "../src/db";
import { ArtifactStore, type ArtifactStorage } from "../src/db/artifact-store";
import { openPgDatabase } from "../src/db/pg";
import { PgArtifactStore } from "../src/db/pg/artifact-store";
import { median, table } from "./lib";
import { closeTestDatabases, scratchDatabase } from "../tests/helpers/postgres";

const SIZES = (process.env.ARTIFACT_BENCH_MIB ?? "5,32").split(",").map(Number);
const ROUNDS = Number(process.env.ARTIFACT_BENCH_ROUNDS ?? 5);

async function drain(s: ReadableStream<Uint8Array>): Promise<number> {
  let n = 0;
  for await (const c of s) n += c.length;
  return n;
}

/** Milliseconds to store, read back and zip one artifact of `bytes`, median of the rounds. */
async function measure(store: ArtifactStorage, dir: string, bytes: Buffer): Promise<{ store: number; read: number; download: number }> {
  const t = { store: [] as number[], read: [] as number[], download: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    // Another hash each round: nothing is found stored already.
    const data = Buffer.from(bytes);
    data.writeUInt32BE(round, 0);
    const sha = new Bun.CryptoHasher("sha256").update(data).digest("hex");
    const partial = join(dir, `partial-${sha}`);
    writeFileSync(partial, data);
    await store.sighted({ id: `bench:${sha}`, sha256: sha, node_id: 1n, pot_id: null, source: null, session: null, url: null, filename: null, truncated: false, seen_at: Date.now() }, data.length);
    let at = performance.now();
    await store.keep(sha, partial, null);
    t.store.push(performance.now() - at);
    at = performance.now();
    const n = await drain((await store.open(sha))!);
    t.read.push(performance.now() - at);
    if (n !== data.length) throw new Error(`read ${n} bytes of ${data.length}`);
    at = performance.now();
    await new Response(encryptedZip(`${sha}.bin`, (await store.open(sha))!, "zipcrypto")).arrayBuffer();
    t.download.push(performance.now() - at);
  }
  return { store: median(t.store), read: median(t.read), download: median(t.download) };
}

export async function benchArtifacts(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "hb-bench-artifacts-"));
  const pgDb = await scratchDatabase("hb_bench");
  const pg = await openPgDatabase(pgDb.url);
  const sqlite = openDatabase(join(dir, "core.db"));
  try {
    const rows: (string | number)[][] = [];
    for (const mib of SIZES) {
      const bytes = Buffer.from(Array.from({ length: mib * 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24));
      const file = await measure(new ArtifactStore(sqlite, join(dir, "artifacts")), dir, bytes);
      const chunks = await measure(new PgArtifactStore(pg), dir, bytes);
      rows.push([`${mib} MiB`, "SQLite + file", file.store, file.read, file.download]);
      rows.push([`${mib} MiB`, "PostgreSQL chunks", chunks.store, chunks.read, chunks.download]);
    }
    return table(["artifact", "storage", "store ms", "read ms", "download (zip) ms"], rows);
  } finally {
    sqlite.$client.close();
    await pg.$client.close();
    await pgDb.drop();
    await closeTestDatabases();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) console.log(await benchArtifacts());
