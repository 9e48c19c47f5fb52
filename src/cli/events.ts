/**
 * `honeybee events` (a page of stored events, or `--follow` for the live feed after the latest
 * ones) and `honeybee stats`.
 */
import { InvalidArgumentError, type Command } from "commander";
import { toU64 } from "../protocol/json";
import { parseTimeArg } from "../time";
import { type Ctx, action, wholeNumber, withConnection } from "./command";
import { ApiError } from "./client";
import { Unreachable, usageError } from "./errors";
import { Backoff } from "../node/backoff";
import { LiveFeed } from "./feed";
import { eventLine, eventsTable, statsText, type EventRecord, type Stats } from "./event-format";

interface EventOpts {
  node?: string;
  pot?: string;
  potType?: string;
  type?: string;
  srcIp?: string;
  country?: string;
  asn?: number;
  hassh?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
  follow?: boolean;
}

/**
 * Reads a point in time (src/time.ts, the same reader as REST's `since`): ISO 8601, unix
 * seconds, or an age such as 30s, 15m, 2h, 7d (before now). Sent to Core as ISO 8601 so that
 * both ends agree on the zone (UTC).
 */
export function parseTime(value: string, now = Date.now()): string {
  const ms = parseTimeArg(value, now);
  if (ms === null) throw new InvalidArgumentError("expected an ISO 8601 time (2026-11-22T01:07:41Z), unix seconds, or an age such as 15m, 2h, 7d");
  return new Date(ms).toISOString();
}

/** Core refusing a query built from flags means the flags were wrong: a usage error. */
function badQuery(e: unknown): never {
  if (e instanceof ApiError && e.status === 400) throw usageError(e.message);
  throw e;
}

/** The REST query of the filters; node names are resolved to ids first. */
async function eventQuery(ctx: Ctx, o: EventOpts): Promise<Record<string, string | undefined>> {
  const node_id = o.node === undefined ? undefined : (toU64(o.node)?.toString() ?? (await ctx.api.resolveNode(o.node)).node_id.toString());
  return { node_id, pot_id: o.pot, pot_type: o.potType, event_type: o.type, src_ip: o.srcIp, country: o.country, asn: o.asn?.toString(), hassh: o.hassh, since: o.since, until: o.until, limit: o.limit?.toString(), cursor: o.cursor };
}

/** Filters the live feed cannot apply itself (it knows node, pot and event type only). */
function matchesLocally(e: EventRecord, o: EventOpts): boolean {
  if (o.potType !== undefined && e.pot_type !== o.potType) return false;
  if (o.srcIp !== undefined && e.src_ip !== o.srcIp) return false;
  if (o.country !== undefined && e.geo?.country !== o.country.toUpperCase()) return false;
  if (o.asn !== undefined && e.geo?.asn !== o.asn) return false;
  if (o.hassh !== undefined && !(e.event_type.endsWith(".client.kex") && (e.data as { hassh?: unknown } | null)?.hassh === o.hassh)) return false;
  if (o.until !== undefined && e.timestamp > o.until) return false;
  return true;
}

/** Delays between attempts to reach Core again while following (capped, with jitter). */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;
const CATCH_UP_PAGE = 1000;

/** Worth trying again: Core did not answer, or answered that it is not ready (5xx). */
const transient = (e: unknown) => e instanceof Unreachable || (e instanceof ApiError && e.status >= 500);

/**
 * Events stored after `lastId` that match the query, oldest first: newest pages are read back
 * (the API pages from the newest) until one reaches `lastId`.
 */
async function eventsAfter(ctx: Ctx, query: Record<string, string | undefined>, lastId: number): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await ctx.api.get<{ events: EventRecord[]; next_cursor: string | null }>("/api/v1/events", { ...query, limit: String(CATCH_UP_PAGE), cursor }).catch(badQuery);
    for (const e of page.events) if (e.id > lastId) out.push(e);
    if (page.next_cursor === null || page.events.some((e) => e.id <= lastId) || Number(page.next_cursor) <= lastId) break;
    cursor = page.next_cursor;
  }
  return out.reverse();
}

/**
 * `--follow`: the latest events, then the live feed. When the feed closes (Core restarts), it
 * reconnects with backoff, first subscribing and then reading what was stored after the last
 * event it saw, so that nothing is missed. The feed delivers events in the order Core committed
 * them, which is the order of their ids: an id not above the last one shown was shown already.
 */
async function follow(ctx: Ctx, o: EventOpts, query: Record<string, string | undefined>): Promise<void> {
  const node_id = query.node_id === undefined ? undefined : BigInt(query.node_id);
  const filter = { kinds: ["PotEvent"], node_id, pot_id: o.pot, event_type: o.type };
  const print = (e: EventRecord) => (ctx.json ? ctx.printJson(e) : ctx.out(eventLine(e)));
  let lastId = 0;
  const show = (e: EventRecord) => {
    if (e.id <= lastId) return;
    lastId = e.id;
    if (matchesLocally(e, o)) print(e);
  };
  const filters = { ...query, cursor: undefined };
  // Subscribe before reading the latest page, so that no event falls between the two. A first
  // connection that fails is the operator's to fix (address, token): say so and stop.
  let feed = await LiveFeed.connect(ctx.ws, filter, ctx.token);
  try {
    // The newest id of all (not only of matching events) bounds what a reconnect reads back,
    // however rare the matching events are. Asked before the page: whatever is stored after it
    // and matches is in the page or arrives on the feed.
    const newest = await ctx.api.get<{ events: EventRecord[] }>("/api/v1/events", { limit: "1" });
    const page = await ctx.api.get<{ events: EventRecord[] }>("/api/v1/events", { ...filters, limit: String(o.limit ?? 10) }).catch(badQuery);
    for (const e of [...page.events].reverse()) show(e);
    lastId = Math.max(lastId, newest.events[0]?.id ?? 0);
    ctx.progress(`following events from ${ctx.ws} (Ctrl-C to stop)`);
    const backoff = new Backoff(RECONNECT_MIN_MS, RECONNECT_MAX_MS);
    for (;;) {
      const next = await feed.next();
      if ("timeout" in next) continue;
      if ("closed" in next) {
        feed.close();
        ctx.progress(`the live feed closed (code ${next.closed.code}${next.closed.reason ? `: ${next.closed.reason}` : ""}); reconnecting`);
        for (;;) {
          await Bun.sleep(backoff.next());
          try {
            feed = await LiveFeed.connect(ctx.ws, filter, ctx.token);
          } catch (e) {
            if (transient(e)) continue;
            throw e;
          }
          try {
            for (const e of await eventsAfter(ctx, filters, lastId)) show(e);
            break;
          } catch (e) {
            feed.close();
            if (transient(e)) continue;
            throw e;
          }
        }
        backoff.reset();
        ctx.progress(`following events from ${ctx.ws} again`);
        continue;
      }
      if (next.kind === "PotEvent") show(next.payload as EventRecord);
    }
  } finally {
    feed.close();
  }
}

export function registerEventCommands(program: Command): void {
  const time = (v: string) => parseTime(v);
  withConnection(
    program
      .command("events")
      .description("list recorded events, newest last (also with --json); --follow keeps printing new ones as they arrive")
      .option("--node <node>", "only events of this node (id or name)")
      .option("--pot <pot_id>", "only events of this honeypot")
      .option("--pot-type <kind>", "only events of this honeypot kind, e.g. cowrie")
      .option("--type <event_type>", "only this event type, e.g. cowrie.login.failed")
      .option("--src-ip <address>", "only events from this source address")
      .option("--country <code>", "only events from addresses in this country (ISO 3166 code, e.g. CN)")
      .option("--asn <number>", "only events from addresses in this autonomous system, e.g. 4134", wholeNumber(0, 4294967295))
      .option("--hassh <fingerprint>", "only SSH key exchanges (<kind>.client.kex) of this client fingerprint (HASSH, 32 hex digits), as in honeybee stats", (v: string) => {
        if (!/^[0-9a-fA-F]{32}$/.test(v)) throw new InvalidArgumentError("expected a HASSH: 32 hexadecimal digits");
        return v.toLowerCase();
      })
      .option("--since <time>", "from this time: ISO 8601, unix seconds, or an age such as 15m, 2h, 7d", time)
      .option("--until <time>", "up to this time (same forms as --since)", time)
      .option("--limit <n>", "how many events (default 20; with --follow, how many earlier ones to show first, default 10)", wholeNumber(1, 1000))
      .option("--cursor <cursor>", "the next page: the cursor printed after the previous one", (v: string) => {
        if (!/^\d{1,16}$/.test(v)) throw new InvalidArgumentError('expected the number printed after "older events: add --cursor"');
        return v;
      })
      .option("-f, --follow", "keep printing new events as they arrive, across restarts of Core (Ctrl-C stops)"),
  ).action(
    action<EventOpts>(async (ctx, _args, o) => {
      const query = await eventQuery(ctx, o);
      if (o.follow) return follow(ctx, o, query);
      const page = await ctx.api.get<{ events: EventRecord[]; next_cursor: string | null }>("/api/v1/events", { ...query, limit: String(o.limit ?? 20) }).catch(badQuery);
      // Oldest first in both modes, so that a script reads what a person sees.
      const events = [...page.events].reverse();
      if (ctx.json) return ctx.printJson({ events, next_cursor: page.next_cursor });
      ctx.out(eventsTable(events, ctx.width));
      if (page.next_cursor) ctx.progress(`older events: add --cursor ${page.next_cursor}`);
    }),
  );

  withConnection(
    program
      .command("stats")
      .description("event counts and the top source addresses, usernames, passwords, event types, countries and ASNs")
      .option("--window <span>", "count over this many minutes, hours or days before now, e.g. 15m, 24h, 7d (default 24h)")
      .option("--top <n>", "entries per top list (default 10)", wholeNumber(1, 100)),
  ).action(
    action<{ window?: string; top?: number }>(async (ctx, _args, o) => {
      const stats = await ctx.api.get<Stats>("/api/v1/stats", { window: o.window, top: o.top?.toString() }).catch(badQuery);
      if (ctx.json) return ctx.printJson(stats);
      ctx.out(statsText(stats, ctx.width));
    }),
  );
}
