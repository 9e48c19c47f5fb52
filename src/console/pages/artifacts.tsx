/**
 * Malware: the files attackers downloaded or uploaded (docs/artifacts.md). /artifacts lists
 * them, last seen first, with their type from the magic bytes and how many sessions and sources
 * fetched each; /artifacts/{sha256} shows one with every sighting (the session, the attacker,
 * the URL) and, for an operator, the download: a zip encrypted with the password `infected`.
 */
import { useState } from "preact/hooks";
import { byteSize } from "../../bytes";
import type { Artifact as ArtifactOf, ArtifactPage as ArtifactPageOf } from "../../modules/artifacts/schemas";
import { ApiError, get, qs, token, type Wire } from "../api";
import { Card, ErrorNote, useAsync, useMe } from "../components";
import { num, time } from "../format";
import { attackerHref } from "../links";
import { navigate } from "../router";

type Artifact = Wire<ArtifactOf>;
type ArtifactList = Wire<ArtifactPageOf>;

const PAGE = 50;
const ZIP_PASSWORD = "infected";
const FILTERS = ["session", "node_id"] as const;

export const artifactHref = (sha256: string) => `/artifacts/${encodeURIComponent(sha256)}`;

function TypeOf({ a }: { a: Pick<Artifact, "mime" | "stored"> }) {
  if (a.mime) return <span class="mono">{a.mime}</span>;
  return <span class="muted">{a.stored ? "unknown" : "not stored yet"}</span>;
}

export function ArtifactsPage({ query }: { query: URLSearchParams }) {
  const filter: Record<string, string> = {};
  for (const f of FILTERS) {
    const v = query.get(f);
    if (v) filter[f] = v;
  }
  const cursor = query.get("cursor");
  const key = JSON.stringify([filter, cursor]);
  const page = useAsync(() => get<ArtifactList>("/api/v1/artifacts" + qs({ ...filter, limit: PAGE, cursor })), [key]);
  const go = (c?: string | null) => navigate("/artifacts" + qs({ ...filter, cursor: c }));
  const rows = page.data?.artifacts ?? [];
  return (
    <main id="main" class="events-page">
      <h1>Artifacts</h1>
      <p class="muted">
        Files attackers downloaded or uploaded, kept once each by SHA-256 with their type from the magic bytes. They are live malware: Core hands them out only to operators, inside a zip encrypted with the password{" "}
        <code>{ZIP_PASSWORD}</code>.
      </p>
      <div class="toolbar">
        <span class="muted">
          {cursor ? "Older artifacts" : "Last seen first"}
          {filter.session && (
            <>
              {" "}
              · session <bdi class="mono">{filter.session}</bdi>
            </>
          )}
          {filter.node_id && (
            <>
              {" "}
              · node <bdi class="mono">{filter.node_id}</bdi>
            </>
          )}
        </span>
        {Object.keys(filter).length > 0 && <a href="/artifacts">all artifacts</a>}
      </div>
      <ErrorNote error={page.error} />
      {page.loading && !page.data && <p class="muted">Reading artifacts…</p>}
      {page.data && (
        <div class="table-wrap">
          <table class="artifacts" data-testid="artifacts">
            <thead>
              <tr>
                <th scope="col">SHA-256</th>
                <th scope="col">type</th>
                <th scope="col" class="n">
                  size
                </th>
                <th scope="col">first seen</th>
                <th scope="col">last seen</th>
                <th scope="col" class="n">
                  sessions
                </th>
                <th scope="col" class="n">
                  sources
                </th>
                <th scope="col">from</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 && (
                <tr>
                  <td colSpan={8} class="muted">
                    No artifacts{Object.keys(filter).length > 0 ? " match" : " yet: they appear when an attacker's wget, curl, scp or upload brings a file to a honeypot"}.
                  </td>
                </tr>
              )}
              {rows.map((a) => (
                <tr key={a.sha256} data-sha256={a.sha256}>
                  <td class="mono nowrap">
                    <a href={artifactHref(a.sha256)} title={a.sha256}>
                      {a.sha256.slice(0, 16)}…
                    </a>
                  </td>
                  <td>
                    <TypeOf a={a} />
                  </td>
                  <td class="n nowrap">{byteSize(Number(a.size))}</td>
                  <td class="mono nowrap">{time(a.first_seen)}</td>
                  <td class="mono nowrap">{time(a.last_seen)}</td>
                  <td class="n">{num(a.sessions.length)}</td>
                  <td class="n">{num(a.sources.length)}</td>
                  <td class="mono ellipsis">
                    <bdi>{a.urls[0] ?? "–"}</bdi>
                    {a.urls.length > 1 && <span class="muted"> +{a.urls.length - 1}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="pager">
        <button type="button" disabled={!cursor} onClick={() => go()}>
          ← Newest
        </button>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => go(page.data?.next_cursor)}>
          Older →
        </button>
      </div>
    </main>
  );
}

/** The zip, fetched with the signed-in token (a plain link could not carry it), saved through a blob URL. */
async function saveZip(sha256: string): Promise<void> {
  const t = token.get();
  const res = await fetch(`/api/v1/artifacts/${sha256}/download`, { headers: t ? { authorization: `Bearer ${t}` } : {} });
  if (!res.ok) {
    const err = (await res.json().catch(() => null))?.error;
    throw new ApiError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? `download: HTTP ${res.status}`);
  }
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = `${sha256}.zip`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function Download({ a }: { a: Artifact }) {
  const me = useMe();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const what = (
    <>
      a zip holding <code>{a.sha256}.bin</code>, encrypted with the password <code data-testid="zip-password">{ZIP_PASSWORD}</code>
    </>
  );
  if (me.role !== "operator") return <p class="muted">Downloads need an operator token: an operator gets {what}.</p>;
  if (!a.stored) return <p class="muted">Its bytes are still on their way from the node: no download yet.</p>;
  return (
    <>
      <p>
        <button
          type="button"
          disabled={busy}
          onClick={() => {
            setBusy(true);
            setError(null);
            saveZip(a.sha256).then(
              () => setBusy(false),
              (e) => (setError(e), setBusy(false)),
            );
          }}
        >
          {busy ? "Downloading…" : "Download zip"}
        </button>{" "}
        <span class="muted">{what}. Never open it outside an isolated analysis machine.</span>
      </p>
      <ErrorNote error={error} />
    </>
  );
}

export function ArtifactPage({ sha256 }: { sha256: string }) {
  const r = useAsync(
    () =>
      get<Artifact>(`/api/v1/artifacts/${encodeURIComponent(sha256)}`).catch((e) => {
        if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return null;
        throw e;
      }),
    [sha256],
  );
  const a = r.data;
  return (
    <main id="main" class="attacker">
      <h1>
        Artifact <bdi class="mono">{sha256.slice(0, 16)}…</bdi>
      </h1>
      <ErrorNote error={r.error} />
      {r.loading && !a && <p class="muted">Reading the artifact…</p>}
      {a === null && !r.loading && !r.error && (
        <p class="muted">
          Core has no artifact with SHA-256 <code>{sha256}</code>. Artifacts are listed on <a href="/artifacts">Artifacts</a>.
        </p>
      )}
      {a && (
        <>
          <dl class="facts" data-testid="artifact-facts">
            <div class="wide">
              <dt>SHA-256</dt>
              <dd class="mono">{a.sha256}</dd>
            </div>
            <div>
              <dt>Type</dt>
              <dd>
                <TypeOf a={a} />
                {a.ext && <span class="muted"> (.{a.ext})</span>}
              </dd>
            </div>
            <div>
              <dt>Size</dt>
              <dd>
                {byteSize(Number(a.size))} <span class="muted">({num(Number(a.size))} bytes)</span>
              </dd>
            </div>
            <div>
              <dt>First seen</dt>
              <dd>{time(a.first_seen)}</dd>
            </div>
            <div>
              <dt>Last seen</dt>
              <dd>{time(a.last_seen)}</dd>
            </div>
            <div>
              <dt>Sessions</dt>
              <dd>{num(a.sessions.length)}</dd>
            </div>
            <div>
              <dt>Sources</dt>
              <dd>{num(a.sources.length)}</dd>
            </div>
          </dl>
          <Card title="Download" id="download">
            <Download a={a} />
          </Card>
          <div class="grid2">
            <Card title={`Sources (${a.sources.length})`} id="sources">
              <ul class="plain mono" data-testid="sources">
                {a.sources.length === 0 && <li class="muted">none known (an upload outside a session)</li>}
                {a.sources.map((ip) => (
                  <li key={ip}>
                    <a href={attackerHref(ip)}>{ip}</a>
                  </li>
                ))}
              </ul>
            </Card>
            <Card title={`URLs (${a.urls.length})`} id="urls">
              <ul class="plain mono" data-testid="urls">
                {a.urls.length === 0 && <li class="muted">none</li>}
                {a.urls.map((u) => (
                  <li key={u}>
                    <bdi>{u}</bdi>
                  </li>
                ))}
              </ul>
            </Card>
          </div>
          <Card title={`Sightings (${a.sightings.length})`} id="sightings">
            <div class="table-wrap">
              <table data-testid="sightings">
                <thead>
                  <tr>
                    <th scope="col">seen</th>
                    <th scope="col">session</th>
                    <th scope="col">address</th>
                    <th scope="col">honeypot</th>
                    <th scope="col">how</th>
                    <th scope="col">URL or path</th>
                    <th scope="col">name</th>
                  </tr>
                </thead>
                <tbody>
                  {a.sightings.map((s, i) => (
                    <tr key={i}>
                      <td class="mono nowrap">{time(s.seen_at)}</td>
                      <td class="mono nowrap">
                        {s.session_id !== null ? <a href={`/sessions/${s.session_id}`}>{s.session ?? s.session_id}</a> : (s.session ?? <span class="muted">–</span>)}
                      </td>
                      <td class="mono">{s.src_ip ? <a href={attackerHref(s.src_ip)}>{s.src_ip}</a> : <span class="muted">–</span>}</td>
                      <td>
                        <bdi>{s.pot_id ?? "–"}</bdi>
                      </td>
                      <td class="mono">{s.source ?? "–"}</td>
                      <td class="mono ellipsis">
                        <bdi>{s.url ?? "–"}</bdi>
                        {s.truncated && (
                          <>
                            {" "}
                            <span class="badge mid" title="the download stopped at the size limit: these are its first bytes">
                              cut
                            </span>
                          </>
                        )}
                      </td>
                      <td class="mono">
                        <bdi>{s.filename ?? "–"}</bdi>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        </>
      )}
    </main>
  );
}
