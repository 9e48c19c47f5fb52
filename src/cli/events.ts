/**
 * `honeybee events` (a page of stored events, or `--follow` for the live feed after the latest
 * ones) and `honeybee stats`.
 */
import { InvalidArgumentError, type Command } from "commander";
import { toU64 } from "../protocol/json";
import { parseTimeArg } from "../time";
import { type Ctx, action, wholeNumber, withConnection } from "./command";
import { ApiError } from "./client";
import { CliError, usageError } from "./errors";
import { LiveFeed } from "./feed";
import { eventLine, eventsTable, statsText, type EventRecord, type Stats } from "./event-format";

interface EventOpts {
  node?: string;
  pot?: string;
  potType?: string;
  type?: string;
  srcIp?: string;
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
  return { node_id, pot_id: o.pot, pot_type: o.potType, event_type: o.type, src_ip: o.srcIp, since: o.since, until: o.until, limit: o.limit?.toString(), cursor: o.cursor };
}

/** Filters the live feed cannot apply itself (it knows node, pot and event type only). */
function matchesLocally(e: EventRecord, o: EventOpts): boolean {
  if (o.potType !== undefined && e.pot_type !== o.potType) return false;
  if (o.srcIp !== undefined && e.src_ip !== o.srcIp) return false;
  if (o.until !== undefined && e.timestamp > o.until) return false;
  return true;
}

async function follow(ctx: Ctx, o: EventOpts, query: Record<string, string | undefined>): Promise<void> {
  const node_id = query.node_id === undefined ? undefined : BigInt(query.node_id);
  // Subscribe before reading the latest page, so that no event falls between the two.
  const feed = await LiveFeed.connect(ctx.ws, { kinds: ["PotEvent"], node_id, pot_id: o.pot, event_type: o.type }, ctx.token);
  const print = (e: EventRecord) => (ctx.json ? ctx.printJson(e) : ctx.out(eventLine(e)));
  try {
    const page = await ctx.api.get<{ events: EventRecord[] }>("/api/v1/events", { ...query, limit: String(o.limit ?? 10), cursor: undefined }).catch(badQuery);
    // Events committed between subscribing and reading the page arrive twice; print them once.
    const shown = new Set(page.events.map((e) => e.id));
    for (const e of [...page.events].reverse()) print(e);
    ctx.progress(`following events from ${ctx.ws} (Ctrl-C to stop)`);
    for (;;) {
      const next = await feed.next();
      if ("closed" in next) throw new CliError(`the live feed closed (code ${next.closed.code}${next.closed.reason ? `: ${next.closed.reason}` : ""}); run the command again to resume`);
      if ("timeout" in next || next.kind !== "PotEvent") continue;
      const e = next.payload as EventRecord;
      if (shown.has(e.id)) continue;
      if (matchesLocally(e, o)) print(e);
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
      .description("list recorded events, newest last; --follow keeps printing new ones as they arrive")
      .option("--node <node>", "only events of this node (id or name)")
      .option("--pot <pot_id>", "only events of this honeypot")
      .option("--pot-type <kind>", "only events of this honeypot kind, e.g. cowrie")
      .option("--type <event_type>", "only this event type, e.g. cowrie.login.failed")
      .option("--src-ip <address>", "only events from this source address")
      .option("--since <time>", "from this time: ISO 8601, unix seconds, or an age such as 15m, 2h, 7d", time)
      .option("--until <time>", "up to this time (same forms as --since)", time)
      .option("--limit <n>", "how many events (default 20; with --follow, how many earlier ones to show first, default 10)", wholeNumber(1, 1000))
      .option("--cursor <cursor>", "the next page: the cursor printed after the previous one", (v: string) => {
        if (!/^\d{1,16}$/.test(v)) throw new InvalidArgumentError('expected the number printed after "older events: add --cursor"');
        return v;
      })
      .option("-f, --follow", "keep printing new events as they arrive (Ctrl-C stops)"),
  ).action(
    action<EventOpts>(async (ctx, _args, o) => {
      const query = await eventQuery(ctx, o);
      if (o.follow) return follow(ctx, o, query);
      const page = await ctx.api.get<{ events: EventRecord[]; next_cursor: string | null }>("/api/v1/events", { ...query, limit: String(o.limit ?? 20) }).catch(badQuery);
      if (ctx.json) return ctx.printJson(page);
      ctx.out(eventsTable([...page.events].reverse(), ctx.width));
      if (page.next_cursor) ctx.progress(`older events: add --cursor ${page.next_cursor}`);
    }),
  );

  withConnection(
    program
      .command("stats")
      .description("event counts and the top source addresses, usernames, passwords and event types")
      .option("--window <span>", "count over this many hours or days before now, e.g. 24h, 7d (default 24h)")
      .option("--top <n>", "entries per top list (default 10)", wholeNumber(1, 100)),
  ).action(
    action<{ window?: string; top?: number }>(async (ctx, _args, o) => {
      const stats = await ctx.api.get<Stats>("/api/v1/stats", { window: o.window, top: o.top?.toString() }).catch(badQuery);
      if (ctx.json) return ctx.printJson(stats);
      ctx.out(statsText(stats, ctx.width));
    }),
  );
}
