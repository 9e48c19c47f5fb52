/**
 * Events: the stored events with every filter of GET /api/v1/events, kept in the page's URL
 * (so a filtered view is a link), cursor paging, an event's whole JSON, and an export of the
 * whole filter as CSV or NDJSON.
 */
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { get, qs, type EventRecord } from "../api";
import { ErrorNote, Json, Summary, useAsync } from "../components";
import { time } from "../format";
import { navigate } from "../router";

const FIELDS = ["node_id", "pot_id", "pot_type", "event_type", "src_ip", "since", "until", "country", "asn", "hassh"] as const;
const PAGE = 50;
/** An export reads pages of 1,000; this many at most, so a click cannot pull the whole database into a tab. */
const EXPORT_MAX = 100_000;

interface Page {
  events: EventRecord[];
  next_cursor: string | null;
}

const CSV_COLUMNS = ["id", "timestamp", "node_id", "pot_id", "pot_type", "event_type", "src_ip", "data"] as const;

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
  // Quoted always; a leading = + - @ is neutralised so a spreadsheet does not run an attacker's formula.
  return '"' + (/^[=+\-@\t\r]/.test(s) ? "'" + s : s).replace(/"/g, '""') + '"';
}

export function toCsv(events: EventRecord[]): string {
  const lines = [CSV_COLUMNS.join(",")];
  for (const e of events) lines.push(CSV_COLUMNS.map((c) => csvCell(e[c])).join(","));
  return lines.join("\r\n") + "\r\n";
}

async function exportAll(filter: Record<string, string>, format: "csv" | "ndjson", progress: (n: number) => void): Promise<void> {
  const all: EventRecord[] = [];
  let cursor: string | null = null;
  do {
    const page: Page = await get<Page>("/api/v1/events" + qs({ ...filter, limit: 1000, cursor }));
    all.push(...page.events);
    progress(all.length);
    cursor = page.next_cursor;
  } while (cursor && all.length < EXPORT_MAX);
  // node_id was read as a string to stay exact; NDJSON writes it back as the exact number Core sent.
  const text = format === "csv" ? toCsv(all) : all.map((e) => JSON.stringify(e).replace(/"node_id":"(\d+)"/, '"node_id":$1')).join("\n") + "\n";
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([text], { type: format === "csv" ? "text/csv" : "application/x-ndjson" }));
  a.download = `honeybee-events-${new Date().toISOString().replace(/[:.]/g, "-")}.${format}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

export function EventsPage({ query }: { query: URLSearchParams }) {
  const filter: Record<string, string> = {};
  for (const f of FIELDS) {
    const v = query.get(f);
    if (v) filter[f] = v;
  }
  const cursor = query.get("cursor");
  const key = JSON.stringify([filter, cursor]);
  const page = useAsync(() => get<Page>("/api/v1/events" + qs({ ...filter, limit: PAGE, cursor })), [key]);
  const [open, setOpen] = useState<number | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<Error | null>(null);
  const [draft, setDraft] = useState<Record<string, string>>(filter);
  const [draftKey, setDraftKey] = useState(key);
  if (draftKey !== key) {
    setDraft(filter);
    setDraftKey(key);
  }

  const go = (f: Record<string, string>, c?: string | null) => navigate("/events" + qs({ ...f, cursor: c }));
  // "1h", "24h", "7d": Core reads them as that long before now (docs/api.md, since).
  const field = (name: (typeof FIELDS)[number], label: string, placeholder: string) => (
    <label>
      {label}
      <input name={name} value={draft[name] ?? ""} placeholder={placeholder} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value.trim() })} />
    </label>
  );
  return (
    <main id="main" class="events-page">
      <h1>Events</h1>
      <form
        class="filters"
        aria-label="Event filters"
        onSubmit={(e) => {
          e.preventDefault();
          go(Object.fromEntries(Object.entries(draft).filter(([, v]) => v)));
        }}
      >
        {field("src_ip", "Address", "203.0.113.7")}
        {field("event_type", "Event type", "cowrie.login.failed")}
        {field("pot_id", "Honeypot", "ssh-01")}
        {field("pot_type", "Kind", "cowrie")}
        {field("node_id", "Node (id or name)", "")}
        {field("since", "Since", "1h, 2026-11-21T00:00:00Z")}
        {field("until", "Until", "")}
        {/* GeoIP's and HASSH's filters: offered once a link (from the overview's top lists) brings them. */}
        {filter.country !== undefined && field("country", "Country", "DE")}
        {filter.asn !== undefined && field("asn", "Network (ASN)", "4134")}
        {filter.hassh !== undefined && field("hassh", "SSH client (HASSH)", "472b5de333ad665af5cbf10ff892c4df")}
        <fieldset class="ranges" aria-label="Time range">
          {["1h", "24h", "7d"].map((r) => (
            <button key={r} type="button" class="ghost" aria-pressed={filter.since === r && !filter.until} onClick={() => go({ ...filter, since: r, until: "" })}>
              last {r}
            </button>
          ))}
        </fieldset>
        <button type="submit">Filter</button>
        <button type="button" class="ghost" onClick={() => go({})}>
          Clear
        </button>
      </form>
      <div class="toolbar">
        <span class="muted">
          {cursor ? "Older events" : "Newest first"}
          {Object.keys(filter).length > 0 && " · filtered"}
        </span>
        <span class="spacer" />
        <button type="button" disabled={exporting !== null} onClick={() => run("csv")}>
          Export CSV
        </button>
        <button type="button" disabled={exporting !== null} onClick={() => run("ndjson")}>
          Export NDJSON
        </button>
        {exporting && <span class="muted">{exporting}</span>}
      </div>
      <ErrorNote error={page.error ?? exportError} />
      <div class="table-wrap">
        <table class="events fit" data-testid="events">
          <thead>
            <tr>
              <th scope="col">time</th>
              <th scope="col">address</th>
              <th scope="col">honeypot</th>
              <th scope="col">event type</th>
              <th scope="col">what</th>
            </tr>
          </thead>
          <tbody>
            {page.data?.events.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  No events match.
                </td>
              </tr>
            )}
            {page.data?.events.map((e) => (
              <Fragment key={e.id}>
                <tr class={open === e.id ? "open" : ""}>
                  <td class="mono nowrap">
                    <button type="button" class="link" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)} title="Show the whole event">
                      {time(e.timestamp)}
                    </button>
                  </td>
                  <td class="mono">{e.src_ip ? <a href={`/attackers/${encodeURIComponent(e.src_ip)}`}>{e.src_ip}</a> : "–"}</td>
                  <td>{e.pot_id ?? "–"}</td>
                  <td class="mono">{e.event_type}</td>
                  <td class="ellipsis what">
                    <Summary e={e} />
                  </td>
                </tr>
                {open === e.id && (
                  <tr class="json-row">
                    <td colSpan={5}>
                      <Json value={e} />
                    </td>
                  </tr>
                )}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
      <div class="pager">
        <button type="button" disabled={!cursor} onClick={() => go(filter)}>
          ← Newest
        </button>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => go(filter, page.data?.next_cursor)}>
          Older →
        </button>
      </div>
    </main>
  );

  function run(format: "csv" | "ndjson") {
    setExportError(null);
    setExporting("reading events…");
    exportAll(filter, format, (n) => setExporting(`${n} events read…`)).then(
      () => setExporting(null),
      (e) => (setExporting(null), setExportError(e)),
    );
  }
}
