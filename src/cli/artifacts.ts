/**
 * `honeybee artifacts` (files attackers downloaded or uploaded, docs/artifacts.md): the list,
 * one artifact with its sightings, and `--download FILE`, the zip encrypted with the password
 * `infected` (an operator's token).
 */
import { writeFileSync } from "node:fs";
import { type Command, InvalidArgumentError } from "commander";
import { byteSize } from "../bytes";
import type { Artifact, ArtifactPage } from "../modules/artifacts";
import { toU64 } from "../protocol/json";
import { ApiError } from "./client";
import { type Ctx, action, wholeNumber, withConnection } from "./command";
import { CliError, usageError } from "./errors";
import { shortTime } from "./event-format";
import { clean, renderFields, renderTable, type Column } from "./table";

type Sighting = Artifact["sightings"][number];

const SHA256 = /^[0-9a-f]{64}$/;
const ZIP_PASSWORD = "infected";

const typeOf = (a: Artifact) => a.mime ?? (a.stored ? "unknown" : "(not stored yet)");

const COLUMNS: Column<Artifact>[] = [
  { header: "SHA-256", value: (a) => a.sha256.slice(0, 12) },
  { header: "SIZE", value: (a) => byteSize(a.size), right: true },
  { header: "TYPE", value: typeOf, shrink: true },
  { header: "FIRST SEEN (UTC)", value: (a) => shortTime(a.first_seen) },
  { header: "LAST SEEN (UTC)", value: (a) => shortTime(a.last_seen) },
  { header: "SESSIONS", value: (a) => String(a.sessions.length), right: true },
  { header: "SOURCES", value: (a) => String(a.sources.length), right: true },
];

export function artifactsTable(rows: Artifact[], width?: number): string {
  if (rows.length === 0) return "No artifacts match.";
  return renderTable(COLUMNS, rows, width);
}

const SIGHTING_COLUMNS: Column<Sighting>[] = [
  { header: "TIME (UTC)", value: (s) => shortTime(s.seen_at) },
  { header: "POT", value: (s) => s.pot_id ?? "-" },
  { header: "SESSION", value: (s) => (s.session_id === null ? (s.session ?? "-") : String(s.session_id)), right: true },
  { header: "SOURCE", value: (s) => s.src_ip ?? "-" },
  { header: "URL OR PATH", value: (s) => (s.url ?? "-") + (s.truncated ? "   (cut at the size limit)" : ""), shrink: true },
  { header: "NAME", value: (s) => s.filename ?? "-", shrink: true },
];

export function artifactText(a: Artifact, width?: number): string {
  const fields = renderFields(
    [
      ["Artifact", a.sha256],
      ["Type", `${typeOf(a)}${a.ext ? ` (.${a.ext})` : ""}`],
      ["Size", `${byteSize(a.size)} (${a.size} bytes)`],
      ["First seen", `${shortTime(a.first_seen)} UTC`],
      ["Last seen", `${shortTime(a.last_seen)} UTC`],
      ["Sessions", String(a.sessions.length)],
      ["Sources", a.sources.length === 0 ? "0" : `${a.sources.length}: ${a.sources.join(", ")}`],
      ["URLs", a.urls[0] ?? "none"],
    ],
    width,
  );
  // Further URLs under the first, aligned with the values ("First seen:" is the longest key).
  const more = a.urls.slice(1).map((u) => " ".repeat("First seen: ".length) + clean(u));
  const download = a.stored
    ? `Download (operator token): honeybee artifacts ${a.sha256} --download FILE   (a zip, password "${ZIP_PASSWORD}")`
    : "Its bytes are still on their way from the node: no download yet.";
  const sightings = a.sightings.length ? renderTable(SIGHTING_COLUMNS, a.sightings, width) : "No sightings.";
  return `${[fields, ...more].join("\n")}\n${download}\n\nSESSION is Core's session id (honeybee session ID) when Core has the session.\n${sightings}`;
}

function parseSha(v: string): string {
  const sha = v.toLowerCase();
  if (!SHA256.test(sha)) throw usageError(`an artifact is named by its SHA-256, 64 hex digits; got ${JSON.stringify(v.slice(0, 80))} (the SHA-256 column of "honeybee artifacts" is its first 12)`);
  return sha;
}

/** The full hash from the 12 digits the table shows (or any prefix of 6 or more), among the newest 500. */
async function findArtifact(ctx: Ctx, ref: string): Promise<string> {
  const lower = ref.toLowerCase();
  if (lower.length === 64 || !/^[0-9a-f]{6,63}$/.test(lower)) return parseSha(ref);
  const page = await ctx.api.get<ArtifactPage>("/api/v1/artifacts", { limit: "500" });
  const found = page.artifacts.filter((a) => a.sha256.startsWith(lower));
  if (found.length === 1) return found[0]!.sha256;
  if (found.length > 1) throw new CliError(`${found.length} artifacts start with ${lower}; give more of the SHA-256`);
  throw new CliError(`no artifact starts with ${lower} among the newest 500; give the whole SHA-256`);
}

async function download(ctx: Ctx, sha: string, file: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch(`${ctx.api.base}/api/v1/artifacts/${sha}/download`, { headers: ctx.token ? { authorization: `Bearer ${ctx.token}` } : {}, signal: AbortSignal.timeout(120_000) });
  } catch (e) {
    throw new CliError(`cannot reach Core at ${ctx.api.base} (${(e as Error).message})`);
  }
  if (!res.ok) {
    const body = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
    const why = body?.error?.message ?? `HTTP ${res.status}`;
    const hint = res.status === 401 || res.status === 403 ? "; downloads need an operator's token (HONEYBEE_TOKEN)" : "";
    throw new CliError(`${why}${hint}`);
  }
  const zip = new Uint8Array(await res.arrayBuffer());
  // Live malware inside: readable by its owner only, never executable.
  writeFileSync(file, zip, { mode: 0o600 });
  if (ctx.json) return ctx.printJson({ sha256: sha, file, bytes: zip.length, password: ZIP_PASSWORD });
  ctx.out(`${file}: ${zip.length} bytes, a zip holding ${sha}.bin, password "${ZIP_PASSWORD}" (unzip -P ${ZIP_PASSWORD} ${file})`);
}

interface ArtifactOpts {
  session?: string;
  node?: string;
  limit?: number;
  cursor?: string;
  download?: string;
}

export function registerArtifactCommands(program: Command): void {
  withConnection(
    program
      .command("artifacts")
      .description("files attackers downloaded or uploaded (malware): the list, newest last; with a SHA-256, one artifact and where it was seen")
      .argument("[sha256]", "one artifact: its SHA-256 (or the first 12 digits the list shows)")
      .option("--session <session>", "only artifacts seen in this session (the honeypot's session id)")
      .option("--node <node>", "only artifacts seen on this node (id or name)")
      .option("--limit <n>", "how many artifacts (default 20)", wholeNumber(1, 500))
      .option("--cursor <cursor>", "the next page: the cursor printed after the previous one", (v: string) => {
        if (!/^\d{1,16}:[0-9a-f]{64}$/.test(v)) throw new InvalidArgumentError('expected the value printed after "older artifacts: add --cursor"');
        return v;
      })
      .option("--download <file>", "with a SHA-256: save the artifact as a zip encrypted with the password infected (an operator's token)"),
  ).action(
    action<ArtifactOpts>(async (ctx, [ref], o) => {
      if (ref === undefined) {
        if (o.download !== undefined) throw usageError("--download takes an artifact: honeybee artifacts SHA256 --download FILE");
        const node_id = o.node === undefined ? undefined : (toU64(o.node)?.toString() ?? (await ctx.api.resolveNode(o.node)).node_id.toString());
        const page = await ctx.api.get<ArtifactPage>("/api/v1/artifacts", { session: o.session, node_id, limit: String(o.limit ?? 20), cursor: o.cursor }).catch((e) => {
          throw e instanceof ApiError && e.status === 400 ? usageError(e.message) : e;
        });
        const artifacts = [...page.artifacts].reverse();
        if (ctx.json) return ctx.printJson({ artifacts, next_cursor: page.next_cursor });
        ctx.out(artifactsTable(artifacts, ctx.width));
        if (page.next_cursor) ctx.progress(`older artifacts: add --cursor ${page.next_cursor}`);
        return;
      }
      if (o.session !== undefined || o.node !== undefined || o.limit !== undefined || o.cursor !== undefined) throw usageError("--session, --node, --limit and --cursor filter the list: give them without a SHA-256");
      const sha = await findArtifact(ctx, ref);
      if (o.download !== undefined) return download(ctx, sha, o.download);
      const a = await ctx.api.get<Artifact>(`/api/v1/artifacts/${sha}`);
      if (ctx.json) return ctx.printJson(a);
      ctx.out(artifactText(a, ctx.width));
    }),
  );
}
