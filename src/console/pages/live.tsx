/**
 * Live: the event feed as it happens. Built for floods: messages are queued as they arrive
 * and rendered once per animation frame; only the newest KEEP events are kept (memory stays
 * bounded however long the page is open) and SHOWN of them are in the DOM, in rows of a fixed
 * height, so a burst moves no layout. Node, pot and event type filter on Core's side (the feed
 * subscribes to narrower topics); the address filter runs here.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { get, qs, type EventRecord, type NodeSummary, type Pot } from "../api";
import { EventCells, useAsync } from "../components";
import { openFeed, type FeedState } from "../feed";
import { time } from "../format";

const KEEP = 1000;
const SHOWN = 200;
const RATE_WINDOW_S = 5;
/** Row height in px, as style.css sets it for the live table. */
const ROW = 28;

interface Filters {
  node_id: string;
  pot_id: string;
  event_type: string;
  src_ip: string;
}

export function LivePage() {
  const [filters, setFilters] = useState<Filters>({ node_id: "", pot_id: "", event_type: "", src_ip: "" });
  const [paused, setPaused] = useState(false);
  const [state, setState] = useState<FeedState>("connecting");
  const [, setFrame] = useState(0);
  const kept = useRef<EventRecord[]>([]);
  const queue = useRef<EventRecord[]>([]);
  const raf = useRef(0);
  const pausedRef = useRef(false);
  const missed = useRef(0);
  /** Events that passed the filters since the page opened. */
  const arrived = useRef(0);
  const seconds = useRef<number[]>(new Array(RATE_WINDOW_S + 1).fill(0));
  const second = useRef(Math.floor(Date.now() / 1000));
  const fps = useRef({ frames: 0, since: performance.now(), value: 0 });
  pausedRef.current = paused;

  const lists = useAsync(() => Promise.all([get<{ nodes: NodeSummary[] }>("/api/v1/nodes"), get<{ honeypots: Pot[] }>("/api/v1/honeypots")]), []);
  const ipFilter = filters.src_ip.trim();

  useEffect(() => {
    kept.current = [];
    queue.current = [];
    let live = true;
    /** The stored events loaded: a feed event still queued when they came is not added again. */
    const loaded = new Set<number>();
    const flush = () => {
      raf.current = 0;
      const q = queue.current;
      queue.current = [];
      const k = kept.current;
      for (const e of q) {
        if ((ipFilter && e.src_ip !== ipFilter) || loaded.has(Number(e.id))) continue;
        k.push(e);
        arrived.current++;
      }
      // Trimmed in one splice per frame rather than a shift per event.
      if (k.length > KEEP) k.splice(0, k.length - KEEP);
      const f = fps.current;
      f.frames++;
      setFrame((n) => n + 1);
    };
    // The latest stored events, so the page does not open empty; merged by id with what the
    // feed brought meanwhile (a feed event carries its stored id), each event once.
    get<{ events: EventRecord[] }>(
      "/api/v1/events" + qs({ limit: SHOWN, node_id: filters.node_id, pot_id: filters.pot_id, event_type: filters.event_type, src_ip: ipFilter }),
    ).then(
      (r) => {
        if (!live || r.events.length === 0) return;
        const byId = new Map<number, EventRecord>();
        for (const e of r.events) {
          byId.set(Number(e.id), e);
          loaded.add(Number(e.id));
        }
        for (const e of kept.current) byId.set(Number(e.id), e);
        const merged = [...byId.values()].sort((a, b) => Number(a.id) - Number(b.id));
        kept.current = merged.length > KEEP ? merged.slice(merged.length - KEEP) : merged;
        setFrame((n) => n + 1);
      },
      () => {},
    );
    const close = openFeed({
      kinds: ["PotEvent"],
      node_id: filters.node_id || undefined,
      pot_id: filters.pot_id || undefined,
      event_type: filters.event_type || undefined,
      onState: setState,
      onMessage: (_kind, e: EventRecord) => {
        const now = Math.floor(Date.now() / 1000);
        const s = seconds.current;
        while (second.current < now) {
          second.current++;
          s[second.current % s.length] = 0;
        }
        s[now % s.length]!++;
        if (pausedRef.current) {
          missed.current++;
          // While paused the newest events are still kept (bounded), so resuming shows them.
          if ((!ipFilter || e.src_ip === ipFilter) && !loaded.has(Number(e.id))) {
            kept.current.push(e);
            if (kept.current.length > 2 * KEEP) kept.current.splice(0, KEEP);
          }
          return;
        }
        queue.current.push(e);
        raf.current ||= requestAnimationFrame(flush);
      },
    });
    return () => {
      live = false;
      close();
      cancelAnimationFrame(raf.current);
      raf.current = 0;
    };
  }, [filters.node_id, filters.pot_id, filters.event_type, ipFilter]);

  // The rate and the frame counter tick by themselves when no event comes.
  const [, tick] = useState(0);
  useEffect(() => {
    const id = setInterval(() => {
      const now = Math.floor(Date.now() / 1000);
      const s = seconds.current;
      while (second.current < now) {
        second.current++;
        s[second.current % s.length] = 0;
      }
      const f = fps.current;
      const t = performance.now();
      f.value = (1000 * f.frames) / (t - f.since);
      f.frames = 0;
      f.since = t;
      tick((n) => n + 1);
    }, 1000);
    return () => clearInterval(id);
  }, []);

  const rate = (() => {
    const s = seconds.current;
    const now = second.current;
    let n = 0;
    // Whole seconds before the current one.
    for (let i = 1; i <= RATE_WINDOW_S; i++) n += s[(now - i + s.length) % s.length] ?? 0;
    return n / RATE_WINDOW_S;
  })();

  // Only the rows in view (and a few around them) are in the DOM: at 1,000 events/s every
  // row changes every frame, and laying out 200 of them is what costs, not the script.
  const wrap = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 600 });
  useEffect(() => {
    const el = wrap.current!;
    const ro = new ResizeObserver(() => setView({ top: el.scrollTop, height: el.clientHeight }));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const first = Math.max(0, Math.floor(view.top / ROW) - 5);
  const count = Math.ceil(view.height / ROW) + 10;
  const latest = useMemo(() => kept.current.slice(-SHOWN).reverse(), [kept.current.length, kept.current[kept.current.length - 1], paused]);
  // Paused, or scrolled down to read, the table holds still however many events come
  // meanwhile; scrolled back to the top, it follows the feed again.
  const scrolled = view.top > 0;
  const frozen = useRef<EventRecord[]>([]);
  const heldAt = useRef<number | null>(null);
  if (!paused && !scrolled) {
    frozen.current = latest;
    heldAt.current = null;
  } else heldAt.current ??= arrived.current;
  const shown = frozen.current;
  const newer = heldAt.current === null ? 0 : arrived.current - heldAt.current;
  const [nodes, pots] = lists.data ?? [null, null];
  const set = (k: keyof Filters) => (e: Event) => setFilters({ ...filters, [k]: (e.currentTarget as HTMLInputElement).value });

  return (
    <main id="main" class="live">
      <h1>Live</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Live feed filters">
        <label>
          Node
          <select value={filters.node_id} onChange={set("node_id")}>
            <option value="">all</option>
            {nodes?.nodes.map((n) => (
              <option key={n.node_id} value={n.node_id}>
                {n.node_name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Honeypot
          <select value={filters.pot_id} onChange={set("pot_id")}>
            <option value="">all</option>
            {[...new Set(pots?.honeypots.map((p) => p.pot_id))].map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event type
          <input value={filters.event_type} onChange={set("event_type")} placeholder="cowrie.login.failed" />
        </label>
        <label>
          Address
          <input value={filters.src_ip} onChange={set("src_ip")} placeholder="203.0.113.7" />
        </label>
        <button type="button" onClick={() => ((missed.current = 0), setPaused(!paused))} aria-pressed={paused}>
          {paused ? "Resume" : "Pause"}
        </button>
      </form>
      <p class="live-status" aria-live="off">
        <span class={"dot " + state} aria-hidden="true" /> {state === "open" ? "connected" : state}
        <span class="sep">·</span>
        <span data-testid="rate">{rate.toFixed(1)}</span> events/s
        <span class="sep">·</span>
        <span data-testid="fps">{fps.current.value.toFixed(0)}</span> frames/s
        <span class="sep">·</span>
        {kept.current.length} kept (newest {KEEP})
        {paused && <span class="paused"> · paused, {missed.current} arrived since</span>}
        {!paused && scrolled && (
          <button type="button" class="link newer" onClick={() => wrap.current?.scrollTo({ top: 0 })}>
            ↑ {newer} newer: back to the top to follow
          </button>
        )}
      </p>
      <div class="table-wrap live-table" ref={wrap} onScroll={(e) => setView({ top: e.currentTarget.scrollTop, height: e.currentTarget.clientHeight })}>
        <table class="events" data-testid="live-events">
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
            {shown.length === 0 && (
              <tr>
                <td colSpan={5} class="muted">
                  Waiting for events…
                </td>
              </tr>
            )}
            {first > 0 && <tr class="spacer-row" style={{ height: first * ROW + "px" }} />}
            {shown.slice(first, first + count).map((e) => (
              <tr key={e.id}>
                <td class="mono nowrap">{time(e.timestamp).slice(11)}</td>
                <EventCells e={e} />
              </tr>
            ))}
            {shown.length > first + count && <tr class="spacer-row" style={{ height: (shown.length - first - count) * ROW + "px" }} />}
          </tbody>
        </table>
      </div>
    </main>
  );
}
