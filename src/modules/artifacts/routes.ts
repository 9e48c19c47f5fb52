/**
 * Artifacts over REST: the list, one artifact with its sightings, and the download (operator
 * role only, only as a zip encrypted with `infected`; docs/artifacts.md).
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { toU64 } from "../../protocol/json";
import { ApiError, badRequest, errorResponses, notFound } from "../../core/http/errors";
import { noQuery, queryParams } from "../../core/http/query";
import type { Security } from "../../core/auth";
import { roles } from "../../core/auth/roles";
import { Artifact, ArtifactPage } from "./schemas";
import type { Artifacts } from "./service";
import { encryptedZip, ZIP_PASSWORD } from "./zip";

const MAX_LIMIT = 500;
const SHA256 = /^[0-9a-f]{64}$/;

const ListQuery = queryParams(
  Type.Object({
    session: Type.Optional(Type.String({ maxLength: 128, description: "Only artifacts seen in this session.", example: "a1b2c3d4e5f6" })),
    node_id: Type.Optional(Type.String({ description: "Only artifacts seen on this node.", example: "18446744073709551557" })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: 100, description: `Page size (1-${MAX_LIMIT}).`, example: 100 })),
    cursor: Type.Optional(Type.String({ maxLength: 100, description: "next_cursor of the previous page." })),
  }),
);

const DownloadQuery = queryParams(
  Type.Object({
    // Checked in the handler, which names the two values (a union's own message does not).
    encryption: Type.Optional(Type.String({ enum: ["zipcrypto", "aes"], description: "zipcrypto (default: every unzip tool reads it) or aes (AES-256; 7-Zip, not Debian's unzip).", example: "aes" })),
  }),
);

function parseSha(raw: string): string {
  if (!SHA256.test(raw)) throw badRequest(`sha256 must be 64 lowercase hex digits, got ${JSON.stringify(raw.slice(0, 80))}`);
  return raw;
}

export const artifactsApi = (artifacts: Artifacts, security: Security) =>
  new Elysia({ name: "artifacts", tags: ["Artifacts"] })
    .use(roles(security))
    .get(
      "/api/v1/artifacts",
      async ({ request }) => {
        const q = ListQuery.parse(request.url);
        const node_id = q.node_id === undefined ? undefined : toU64(q.node_id);
        if (node_id === null) throw badRequest("query parameter node_id must be an unsigned 64-bit integer");
        let cursor: { lastSeen: number; sha256: string } | undefined;
        if (q.cursor !== undefined) {
          const m = /^(\d{1,16}):([0-9a-f]{64})$/.exec(q.cursor);
          if (!m) throw badRequest("query parameter cursor must be a next_cursor value from an earlier page");
          cursor = { lastSeen: Number(m[1]), sha256: m[2]! };
        }
        const page = await artifacts.store.list({ limit: q.limit ?? 100, cursor, session: q.session, node_id });
        return { artifacts: await artifacts.describe(page.rows), next_cursor: page.next };
      },
      {
        response: {
          200: ArtifactPage,
          ...errorResponses({ 400: ["bad_request", 'unknown query parameter "sesion"; it takes session, node_id, limit, cursor'] }),
        },
        detail: {
          summary: "List artifacts (files attackers downloaded or uploaded), last seen first",
          description: "Content-addressed by SHA-256: a file seen many times is one artifact with many sightings. docs/artifacts.md describes the flow and its limits.",
          parameters: ListQuery.parameters,
        },
      },
    )
    .get(
      "/api/v1/artifacts/:sha256",
      async ({ params, request }) => {
        noQuery(request.url);
        const row = await artifacts.store.get(parseSha(params.sha256));
        if (!row) throw notFound(`no artifact with sha256 ${params.sha256}`);
        return (await artifacts.describe([row]))[0]!;
      },
      {
        params: t.Object({ sha256: t.String({ description: "SHA-256 of the artifact, lowercase hex." }) }),
        response: {
          200: Artifact,
          ...errorResponses({ 400: ["bad_request", 'sha256 must be 64 lowercase hex digits, got "x"'], 404: ["not_found", "no artifact with sha256 5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b"] }),
        },
        detail: { summary: "Get one artifact and its sightings" },
      },
    )
    .get(
      "/api/v1/artifacts/:sha256/download",
      async ({ params, request }) => {
        const q = DownloadQuery.parse(request.url);
        if (q.encryption !== undefined && q.encryption !== "zipcrypto" && q.encryption !== "aes") {
          throw badRequest(`query parameter encryption must be zipcrypto or aes, got ${JSON.stringify(q.encryption.slice(0, 40))}`);
        }
        const sha = parseSha(params.sha256);
        const row = await artifacts.store.get(sha);
        if (!row) throw notFound(`no artifact with sha256 ${sha}`);
        if (!row.stored) throw new ApiError(409, "not_stored", `artifact ${sha} is still on its way from the node (or was refused); try again later`);
        const bytes = await artifacts.store.open(sha);
        if (!bytes) throw new ApiError(409, "not_stored", `the bytes of artifact ${sha} are missing from Core's artifact storage`);
        const zip = encryptedZip(`${sha}.bin`, bytes, (q.encryption as "zipcrypto" | "aes" | undefined) ?? "zipcrypto");
        return new Response(zip, {
          headers: {
            "content-type": "application/zip",
            "content-disposition": `attachment; filename="${sha}.zip"`,
            "x-zip-password": ZIP_PASSWORD,
            "x-content-type-options": "nosniff",
            "cache-control": "no-store",
          },
        });
      },
      {
        // An artifact's bytes are live malware (docs/artifacts.md): reading them is an operator's act.
        role: "operator",
        params: t.Object({ sha256: t.String({ description: "SHA-256 of the artifact, lowercase hex." }) }),
        response: {
          200: t.Any({ description: "application/zip: one entry `<sha256>.bin`, encrypted with the password `infected`." }),
          ...errorResponses({
            400: ["bad_request", 'query parameter encryption must be zipcrypto or aes, got "des"'],
            404: ["not_found", "no artifact with sha256 5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b"],
            409: ["not_stored", "artifact 5d41402abc4b2a76b9719d911017c592ae0e7c3b6a8f1d2e0c9b8a7f6e5d4c3b is still on its way from the node (or was refused); try again later"],
          }),
        },
        detail: {
          summary: "Download an artifact as a zip encrypted with the password `infected` (operator role)",
          description:
            "Artifacts are live malware. They are never served as they are: only inside a zip encrypted with the password `infected` (the convention that keeps scanners and browsers from acting on them; ZipCrypto unless `encryption=aes`), and only to a token with the operator role. The entry is named `<sha256>.bin`.",
          parameters: DownloadQuery.parameters,
        },
      },
    );
