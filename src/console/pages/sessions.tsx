/**
 * Sessions: the list with every filter of GET /api/v1/sessions kept in the page's URL (a
 * filtered view is a link) and cursor paging. One session's page is in ./session.tsx.
 */
import { useState } from "preact/hooks";
import { get, qs } from "../api";
import { ErrorNote, useAsync } from "../components";
import { navigate } from "../router";
import { SinceButtons } from "../timerange";
import { SessionsTable } from "../sessions/table";
import type { SessionPage } from "../sessions/types";

export { SessionPage } from "./session";

const FIELDS = ["src_ip", "node_id", "pot_id", "since", "until", "has_commands", "has_download", "login_success"] as const;
const PAGE = 50;

export function SessionsPage({ query }: { query: URLSearchParams }) {
  const filter: Record<string, string> = {};
  for (const f of FIELDS) {
    const v = query.get(f);
    if (v) filter[f] = v;
  }
  const cursor = query.get("cursor");
  const key = JSON.stringify([filter, cursor]);
  const page = useAsync(() => get<SessionPage>("/api/v1/sessions" + qs({ ...filter, limit: PAGE, cursor })), [key]);
  const [draft, setDraft] = useState<Record<string, string>>(filter);
  const [draftKey, setDraftKey] = useState(key);
  if (draftKey !== key) {
    setDraft(filter);
    setDraftKey(key);
  }
  const go = (f: Record<string, string>, c?: string | null) => navigate("/sessions" + qs({ ...f, cursor: c }));
  const field = (name: (typeof FIELDS)[number], label: string, placeholder: string) => (
    <label>
      {label}
      <input name={name} value={draft[name] ?? ""} placeholder={placeholder} onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value.trim() })} />
    </label>
  );
  const flag = (name: (typeof FIELDS)[number], label: string) => (
    <label>
      {label}
      <select name={name} value={draft[name] ?? ""} onChange={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })}>
        <option value="">any</option>
        <option value="true">yes</option>
        <option value="false">no</option>
      </select>
    </label>
  );
  return (
    <main id="main" class="events-page">
      <h1>Sessions</h1>
      <form
        class="filters"
        aria-label="Session filters"
        onSubmit={(e) => {
          e.preventDefault();
          go(Object.fromEntries(Object.entries(draft).filter(([, v]) => v)));
        }}
      >
        {field("src_ip", "Address", "203.0.113.7")}
        {field("pot_id", "Honeypot", "ssh-01")}
        {field("node_id", "Node (id or name)", "")}
        {field("since", "Since", "1h, 2026-11-21T00:00:00Z")}
        {field("until", "Until", "")}
        {flag("login_success", "Logged in")}
        {flag("has_commands", "Commands")}
        {flag("has_download", "Files")}
        <SinceButtons since={filter.since} until={filter.until} pick={(r) => go({ ...filter, since: r, until: "" })} />
        <button type="submit">Filter</button>
        <button type="button" class="ghost" onClick={() => go({})}>
          Clear
        </button>
      </form>
      <div class="toolbar">
        <span class="muted">
          {cursor ? "Older sessions" : "Newest first"}
          {Object.keys(filter).length > 0 && " · filtered"}
        </span>
      </div>
      <ErrorNote error={page.error} />
      {page.data && <SessionsTable sessions={page.data.sessions} />}
      {/* A filter on the address, time or honeypot alone scans a bounded slice per page: a short page may still have older ones. */}
      {page.data && page.data.sessions.length < PAGE && page.data.next_cursor && <p class="muted">This page is short because Core reads a bounded slice per request; older sessions may still match.</p>}
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
}
