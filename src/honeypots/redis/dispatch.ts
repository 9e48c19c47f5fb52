/**
 * Runs one command as Redis 7's processCommand does, in its order: the cross-protocol guard
 * (POST, Host:), the command's existence and arity, authentication, a replica's READONLY, then
 * MULTI's queue or the command itself. A real command the honeypot does not emulate (hashes,
 * lists, sets, streams) answers as on a keyspace where its key does not exist.
 */
import { ADMIN_COMMANDS, containerHelp, requiredPassword } from "./admin.ts";
import { ATTACK_COMMANDS } from "./attacks.ts";
import { arityOk, type CommandSpec, lookupCommand } from "./command-table.ts";
import { asPrinted, type Ctx, type Handler, type Outcome, text } from "./context.ts";
import { array, error, integer, map, NIL, OK, type Reply, simple } from "./resp.ts";
import { OOM, STRING_COMMANDS } from "./strings.ts";

const HANDLERS: Record<string, Handler> = { ...STRING_COMMANDS, ...ADMIN_COMMANDS, ...ATTACK_COMMANDS };

/** Commands a client may send before AUTH (Redis's no-auth flag). */
const NO_AUTH = new Set(["auth", "hello", "quit", "reset"]);
/** Commands MULTI does not queue. */
const TRANSACTION = new Set(["exec", "discard", "multi", "watch", "quit", "reset"]);
/** Real Redis queues without limit; a honeypot bounds the queue of one connection. */
const MULTI_MAX_COMMANDS = 1024;
const MULTI_MAX_BYTES = 1024 * 1024;

/**
 * Replies of the data-type commands not emulated, on a missing key: a = empty array, m = empty
 * map and s = empty set (arrays in RESP2), 0 = zero, n = nil, N = null array (a blocking pop
 * that timed out), +1/+2 = elements added (one per argument, or per pair). On a key holding a
 * string they answer WRONGTYPE, as Redis does.
 */
const TYPED: ReadonlyMap<string, string> = new Map(
  `hgetall:m hkeys:a hvals:a lrange:a smembers:s sinter:s sunion:s sdiff:s zrange:a zrangebyscore:a zrevrange:a
  zrevrangebyscore:a zrangebylex:a zrevrangebylex:a xrange:a xrevrange:a hlen:0 llen:0 scard:0 zcard:0 hexists:0
  sismember:0 zcount:0 hdel:0 srem:0 zrem:0 lrem:0 hstrlen:0 zlexcount:0 xlen:0 hget:n lpop:n rpop:n lindex:n spop:n
  srandmember:n zscore:n zrank:n zrevrank:n rpoplpush:n lmove:n hrandfield:n zrandmember:n blpop:N brpop:N
  bzpopmin:N bzpopmax:N blmpop:N bzmpop:N hset:+2 hmset:+2 hsetnx:+2 zadd:+2 lpush:+1 rpush:+1 sadd:+1`
    .split(/\s+/)
    .map((e) => e.split(":") as [string, string]),
);
const WRONGTYPE = error("WRONGTYPE Operation against a key holding the wrong kind of value");

function fallback(ctx: Ctx, spec: CommandSpec, args: Buffer[]): Reply {
  if (spec.name.endsWith("|help")) return containerHelp(spec.name.split("|")[0]!);
  const kind = TYPED.get(spec.name);
  if (!kind) return OK;
  if (ctx.state.keyspace.get(ctx.client.db, text(args[1]))) return WRONGTYPE;
  switch (kind) {
    case "a":
      return array([]);
    case "m":
      return map([]);
    case "s":
      return { type: "set", items: [] };
    case "0":
      return integer(0);
    case "N":
      return { type: "null", array: true };
    case "+1":
      return integer(args.length - 2);
    case "+2":
      return spec.name === "hmset" ? OK : integer(Math.floor((args.length - 2) / 2));
    default:
      return NIL;
  }
}

function unknownCommand(args: Buffer[]): Reply {
  let list = "";
  for (let i = 1; i < args.length && list.length < 128; i++) list += `'${asPrinted(args[i]!, 128 - list.length)}' `;
  return error(`ERR unknown command '${asPrinted(args[0]!)}', with args beginning with: ${list}`);
}

function transaction(ctx: Ctx, name: string): Reply | null {
  const client = ctx.client;
  switch (name) {
    case "multi":
      if (client.multi) return error("ERR MULTI calls can not be nested");
      client.multi = { queue: [], bytes: 0, failed: false };
      return OK;
    case "discard":
      if (!client.multi) return error("ERR DISCARD without MULTI");
      client.multi = null;
      return OK;
    case "watch":
      return client.multi ? error("ERR WATCH inside MULTI is not allowed") : OK;
    case "unwatch":
      return OK;
    default:
      return null;
  }
}

function exec(ctx: Ctx): Outcome {
  const multi = ctx.client.multi;
  if (!multi) return { reply: error("ERR EXEC without MULTI") };
  ctx.client.multi = null;
  if (multi.failed) return { reply: error("EXECABORT Transaction discarded because of previous errors.") };
  const replies: Reply[] = [];
  let close = false;
  for (const queued of multi.queue) {
    const outcome = execute(ctx, queued);
    if (outcome.reply) replies.push(outcome.reply);
    close ||= outcome.close === true;
  }
  return { reply: array(replies), close };
}

/** Refuses a command; inside MULTI the refusal also dooms the transaction, as in Redis. */
function reject(ctx: Ctx, reply: Reply): Outcome {
  if (ctx.client.multi) ctx.client.multi.failed = true;
  return { reply };
}

/** replica-read-only (alias slave-read-only), which attackers turn off before writing to a replica. */
function readOnlyReplica(ctx: Ctx): boolean {
  return ctx.state.configValue("replica-read-only", "yes") === "yes" && ctx.state.configValue("slave-read-only", "yes") === "yes";
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

export function execute(ctx: Ctx, args: Buffer[]): Outcome {
  const outcome = run(ctx, args);
  const reply = outcome.reply;
  if (reply?.type === "error") count(ctx.state.errorCounts, reply.value.split(" ", 1)[0]!);
  return outcome;
}

function run(ctx: Ctx, args: Buffer[]): Outcome {
  const name = text(args[0]).toLowerCase();
  // Redis drops a connection that speaks HTTP to it (cross-protocol scripting), without a reply.
  if (name === "post" || name === "host:") return { reply: null, close: true };
  const found = lookupCommand(args);
  if (found.kind === "unknown") return reject(ctx, unknownCommand(args));
  if (found.kind === "unknown-subcommand") {
    return reject(ctx, error(`ERR unknown subcommand '${asPrinted(args[1]!)}'. Try ${found.container.toUpperCase()} HELP.`));
  }
  const spec = found.spec;
  if (!arityOk(spec, args.length)) return reject(ctx, error(`ERR wrong number of arguments for '${spec.name}' command`));
  const top = spec.name.split("|")[0]!;
  if (!ctx.client.authenticated && requiredPassword(ctx) !== "" && !NO_AUTH.has(top)) return reject(ctx, error("NOAUTH Authentication required."));
  if (ctx.state.master && spec.write && readOnlyReplica(ctx)) return reject(ctx, error("READONLY You can't write against a read only replica."));
  ctx.client.lastCommand = spec.name;
  count(ctx.state.commandCounts, spec.name);
  ctx.server.totals.commands++;

  const multi = ctx.client.multi;
  if (multi && !TRANSACTION.has(top)) {
    const bytes = args.reduce((n, a) => n + a.length, 0);
    if (multi.queue.length >= MULTI_MAX_COMMANDS || multi.bytes + bytes > MULTI_MAX_BYTES) return reject(ctx, OOM);
    multi.queue.push(args);
    multi.bytes += bytes;
    return { reply: simple("QUEUED") };
  }
  if (top === "exec") return exec(ctx);
  const handled = transaction(ctx, top);
  if (handled) return { reply: handled };
  const handler = HANDLERS[spec.name];
  const result = handler ? handler(ctx, args) : fallback(ctx, spec, args);
  return "type" in result ? { reply: result } : result;
}
