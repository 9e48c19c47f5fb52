/**
 * Roles come from the route that matched, not from the URL's text: every operation of the
 * OpenAPI document, asked with a read token as written and with a trailing slash, a dot
 * segment (at the end or before the last segment, also percent-encoded) and a doubled slash
 * (sent as they are, like `curl --path-as-is`), answers the same as its own path or is not
 * routed at all; a read token never gets an artifact's bytes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 as hashToken } from "../../src/core/auth";
import { openDatabase } from "../../src/db";
import { ArtifactStore } from "../../src/db/artifact-store";
import { BIG_ID, getJson, startTestCore, tempDir, type TestCore } from "../helpers";

const READ = "hb_read_token_for_route_roles_0123";
const OPERATOR = "hb_operator_token_for_route_roles_9876";
const TOKENS = [
  { name: "viewer", role: "read" as const, sha256: hashToken(READ) },
  { name: "alice", role: "operator" as const, sha256: hashToken(OPERATOR) },
];
/** GET operations a read token may not call (docs/api.md); every other GET and HEAD is a read. */
const OPERATOR_READS = new Set(["/api/v1/artifacts/{sha256}/download"]);

const BYTES = Buffer.from("#!/bin/sh\necho pwned\n");
const SHA = createHash("sha256").update(BYTES).digest("hex");
const dir = tempDir();
let core: TestCore;

/** One HTTP/1.1 request with the path sent exactly as given (fetch would normalise it). */
async function raw(method: string, path: string, token: string): Promise<{ status: number; body: string }> {
  const { promise, resolve, reject } = Promise.withResolvers<string>();
  let text = "";
  const socket = await Bun.connect({
    hostname: "127.0.0.1",
    port: core.ports.api,
    socket: {
      data: (_s, chunk) => void (text += chunk.toString("latin1")),
      close: () => resolve(text),
      error: (_s, e) => reject(e),
    },
  });
  const body = method === "GET" || method === "HEAD" || method === "DELETE" ? "" : "{}";
  const head = [`${method} ${path} HTTP/1.1`, `host: 127.0.0.1:${core.ports.api}`, `authorization: Bearer ${token}`, "connection: close"];
  if (body) head.push("content-type: application/json", `content-length: ${body.length}`);
  socket.write(`${head.join("\r\n")}\r\n\r\n${body}`);
  const reply = await promise;
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(reply)?.[1] ?? 0);
  return { status, body: reply.slice(reply.indexOf("\r\n\r\n") + 4) };
}

const VALUES: Record<string, string> = { sha256: SHA, node_id: String(BIG_ID), pot_id: "ssh-1", id: "1", command_id: "1", name: "cowrie", kind: "cowrie", ip: "203.0.113.9", output_id: "1", rule_id: "1", file: "swagger-ui.css" };
const fill = (template: string) => template.replace(/\{(\w+)\}/g, (_, name: string) => VALUES[name] ?? "x");
const variants = (path: string) => [path, `${path}/`, `${path}/.`, `${path}/./`, `${path}/%2e`, `${path}/%2E/`, path.replace(/\/([^/]+)$/, "/./$1"), path.replace(/\/([^/]+)$/, "//$1")];

beforeAll(async () => {
  const db = openDatabase(join(dir.path, "core.db"));
  const store = new ArtifactStore(db, join(dir.path, "artifacts"));
  store.sighted({ id: "n:1", sha256: SHA, node_id: BIG_ID, pot_id: "ssh-1", source: "cowrie.session.file_download", session: "a1b2c3d4e5f6", url: "http://198.51.100.7/x.sh", filename: "x.sh", truncated: false, seen_at: Date.now() }, BYTES.length);
  store.markStored(SHA, { mime: "text/x-shellscript", ext: "sh" });
  db.$client.close();
  mkdirSync(join(dir.path, "artifacts"), { recursive: true });
  writeFileSync(join(dir.path, "artifacts", SHA), BYTES);
  core = await startTestCore({ db: join(dir.path, "core.db"), tokens: TOKENS });
});

afterAll(async () => {
  await core?.stop();
  dir[Symbol.dispose]();
});

describe("roles follow the matched route", () => {
  test("an artifact's download is an operator's, however its path is written, with GET and HEAD", async () => {
    const path = `/api/v1/artifacts/${SHA}/download`;
    expect((await raw("GET", path, OPERATOR)).status).toBe(200);
    for (const method of ["GET", "HEAD"]) {
      for (const variant of variants(path)) {
        const r = await raw(method, variant, READ);
        expect({ method, variant, status: r.status }).toEqual({ method, variant, status: r.status === 404 ? 404 : 403 });
        if (r.status === 404 && method === "GET") expect(r.body).toContain("no such path");
      }
    }
  });

  test("every operation answers a read token alike on each spelling of its path", async () => {
    const doc = (await getJson(`${core.api}/swagger/json`)).body;
    const checked: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
        if (!["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].includes(method)) continue;
        const path = fill(template);
        const needsOperator = !(method === "GET" || method === "HEAD") || OPERATOR_READS.has(template);
        for (const variant of variants(path)) {
          const { status } = await raw(method, variant, READ);
          // Not routed at all (404), or routed and judged as the operation's role demands.
          const expected = needsOperator ? [403, 404] : [200, 400, 404, 409, 501, 503];
          expect({ method, variant, ok: expected.includes(status), status }).toEqual({ method, variant, ok: true, status });
          if (needsOperator && status === 404 && method !== "HEAD") expect((await raw(method, variant, READ)).body).toContain("no such path");
        }
        checked.push(`${method} ${template}`);
      }
    }
    expect(checked).toContain("GET /api/v1/artifacts/{sha256}/download");
    expect(checked.length).toBeGreaterThan(20);
  });
});
