/**
 * Events: the stored events with every filter of GET /api/v1/events, kept in the page's URL
 * (so a filtered view is a link), cursor paging, an event's whole JSON, and an export of the
 * whole filter as CSV or NDJSON. Usernames, passwords and commands have no REST filter: the
 * page matches them itself in the events it reads (at most SCAN a page, REST's filters first),
 * says how many it read, and goes on from there with Older.
 */
import { Fragment } from "preact";
import { useState } from "preact/hooks";
import { get, qs, type EventRecord } from "../api";
import { ErrorNote, EventCells, Json, useAsync } from "../components";
import { asName, countryName, num, time } from "../format";
import { navigate } from "../router";
import { SinceButtons } from "../timerange";

const FIELDS = ["node_id", "pot_id", "pot_type", "event_type", "src_ip", "since", "until", "country", "asn", "hassh"] as const;
/** Matched here, in the events REST's filters let through: `data.username`, `data.password`, `data.input`. */
const BROWSER_FIELDS = ["username", "password", "command"] as const;
type BrowserField = (typeof BROWSER_FIELDS)[number];
const DATA_KEY: Record<BrowserField, string> = { username: "username", password: "password", command: "input" };
const PAGE = 50;
/** Events read at most for one page of a username, password or command filter. */
const SCAN = 10_000;
/** An export reads pages of 1,000; this many events at most, so a click cannot pull the whole database into a tab. */
const EXPORT_MAX = 100_000;

interface Page {
  events: EventRecord[];
  next_cursor: string | null;
  /** Events read to find these, when the page matched usernames, passwords or commands itself. */
  read?: number;
}

const matches = (e: EventRecord, data: Partial<Record<BrowserField, string>>) => Object.entries(data).every(([k, v]) => e.data?.[DATA_KEY[k as BrowserField]] === v);

/** One page: REST's page, or with data filters, REST's pages read until PAGE match or SCAN were read. */
async function loadPage(filter: Record<string, string>, data: Partial<Record<BrowserField, string>>, cursor: string | null): Promise<Page> {
  if (Object.keys(data).length === 0) return get<Page>("/api/v1/events" + qs({ ...filter, limit: PAGE, cursor }));
  const events: EventRecord[] = [];
  let read = 0;
  let next = cursor;
  do {
    const p: Page = await get<Page>("/api/v1/events" + qs({ ...filter, limit: 1000, cursor: next }));
    next = p.next_cursor;
    for (const e of p.events) {
      read++;
      if (!matches(e, data)) continue;
      events.push(e);
      // REST's cursor is the id below which the next page starts.
      if (events.length === PAGE) return { events, next_cursor: String(e.id), read };
    }
  } while (next && read < SCAN);
  return { events, next_cursor: next, read };
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

async function exportAll(filter: Record<string, string>, data: Partial<Record<BrowserField, string>>, format: "csv" | "ndjson", progress: (n: number) => void): Promise<void> {
  const all: EventRecord[] = [];
  let cursor: string | null = null;
  let read = 0;
  do {
    const page: Page = await get<Page>("/api/v1/events" + qs({ ...filter, limit: 1000, cursor }));
    all.push(...page.events.filter((e) => matches(e, data)));
    read += page.events.length;
    progress(all.length);
    cursor = page.next_cursor;
  } while (cursor && read < EXPORT_MAX);
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
  const data: Partial<Record<BrowserField, string>> = {};
  for (const f of BROWSER_FIELDS) {
    const v = query.get(f);
    if (v) data[f] = v;
  }
  const cursor = query.get("cursor");
  const key = JSON.stringify([filter, data, cursor]);
  const page = useAsync(() => loadPage(filter, data, cursor), [key]);
  const [open, setOpen] = useState<number | null>(null);
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<Error | null>(null);
  const all = { ...filter, ...data };
  const [draft, setDraft] = useState<Record<string, string>>(all);
  const [draftKey, setDraftKey] = useState(key);
  if (draftKey !== key) {
    setDraft(all);
    setDraftKey(key);
  }

  const go = (f: Record<string, string>, c?: string | null) => navigate("/events" + qs({ ...f, cursor: c }));
  const geo = page.data?.events.find((e) => e.geo)?.geo;
  // "1h", "24h", "7d": Core reads them as that long before now (docs/api.md, since).
  const field = (name: (typeof FIELDS)[number] | BrowserField, label: string, placeholder: string) => (
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
        {data.username !== undefined && field("username", "Username", "root")}
        {data.password !== undefined && field("password", "Password", "123456")}
        {data.command !== undefined && field("command", "Command", "uname -a")}
        <SinceButtons since={filter.since} until={filter.until} pick={(r) => go({ ...all, since: r, until: "" })} />
        <button type="submit">Filter</button>
        <button type="button" class="ghost" onClick={() => go({})}>
          Clear
        </button>
      </form>
      <div class="toolbar">
        <span class="muted" data-testid="filter-summary">
          {cursor ? "Older events" : "Newest first"}
          {Object.keys(all).length > 0 && " · filtered"}
          {filter.country && ` · country ${countryName(filter.country.toUpperCase())}`}
          {filter.asn && ` · network ${asName(filter.asn, geo && String(geo.asn) === filter.asn ? geo.as_org : null)}`}
          {page.data?.read !== undefined && ` · ${num(page.data.read)} events read to find these (usernames, passwords and commands are matched in the browser)`}
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
                  <EventCells e={e} whatClass="ellipsis what" />
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
        <button type="button" disabled={!cursor} onClick={() => go(all)}>
          ← Newest
        </button>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => go(all, page.data?.next_cursor)}>
          Older →
        </button>
      </div>
    </main>
  );

  function run(format: "csv" | "ndjson") {
    setExportError(null);
    setExporting("reading events…");
    exportAll(filter, data, format, (n) => setExporting(`${n} events read…`)).then(
      () => setExporting(null),
      (e) => (setExporting(null), setExportError(e)),
    );
  }
}
