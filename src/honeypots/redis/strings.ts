/**
 * The keyspace commands a scanner or a worm uses: strings (GET, SET with its options, MGET, INCR,
 * ...), keys (DEL, EXISTS, TYPE, TTL, EXPIRE, KEYS, SCAN, RENAME), databases (SELECT, DBSIZE,
 * FLUSHDB, FLUSHALL), with Redis 7's replies and error texts.
 */
import { type Ctx, type Handler, text, upper } from "./context.ts";
import { DATABASES } from "./keyspace.ts";
import { array, bulk, bulks, error, integer, NIL, OK, type Reply, simple } from "./resp.ts";

export const SYNTAX = error("ERR syntax error");
export const NOT_INTEGER = error("ERR value is not an integer or out of range");
export const OOM = error("OOM command not allowed when used memory > 'maxmemory'.");

/** Redis's string2ll on an argument: the integer, or null when it is not one. */
export function toInt(arg: Buffer | undefined): number | null {
  const s = text(arg);
  if (!/^-?(0|[1-9][0-9]{0,18})$/.test(s)) return null;
  const n = BigInt(s);
  return n > 9223372036854775807n || n < -9223372036854775808n ? null : Number(n);
}

const key = (arg: Buffer | undefined) => text(arg);

function store(ctx: Ctx, name: string, value: Buffer, expiresAt: number | null, keepTtl = false): boolean {
  const ok = ctx.state.keyspace.set(ctx.client.db, name, value, expiresAt, keepTtl);
  if (ok) ctx.state.dirty++;
  return ok;
}

function get(ctx: Ctx, name: string): Buffer | undefined {
  return ctx.state.keyspace.get(ctx.client.db, name)?.value;
}

/** SET's options (Redis 7): NX|XX, GET, and one of EX/PX/EXAT/PXAT/KEEPTTL. */
function set(ctx: Ctx, args: Buffer[]): Reply {
  let nx = false;
  let xx = false;
  let getOld = false;
  let keepTtl = false;
  let expiresAt: number | null = null;
  let unit: string | null = null;
  for (let i = 3; i < args.length; i++) {
    const opt = upper(args[i]);
    if (opt === "NX" && !xx) nx = true;
    else if (opt === "XX" && !nx) xx = true;
    else if (opt === "GET") getOld = true;
    else if (opt === "KEEPTTL" && unit === null) keepTtl = true;
    else if ((opt === "EX" || opt === "PX" || opt === "EXAT" || opt === "PXAT") && unit === null && !keepTtl && i + 1 < args.length) {
      const n = toInt(args[++i]);
      if (n === null) return NOT_INTEGER;
      if (n <= 0) return error("ERR invalid expire time in 'set' command");
      unit = opt;
      const now = ctx.now();
      expiresAt = opt === "EX" ? now + n * 1000 : opt === "PX" ? now + n : opt === "EXAT" ? n * 1000 : n;
    } else return SYNTAX;
  }
  const name = key(args[1]);
  const old = get(ctx, name);
  if ((nx && old) || (xx && !old)) return getOld && old ? bulk(old) : NIL;
  if (!store(ctx, name, args[2]!, expiresAt, keepTtl)) return OOM;
  return getOld ? (old ? bulk(old) : NIL) : OK;
}

function setWithTtl(command: string, unitMs: number): Handler {
  return (ctx, args) => {
    const n = toInt(args[2]);
    if (n === null) return NOT_INTEGER;
    if (n <= 0) return error(`ERR invalid expire time in '${command}' command`);
    return store(ctx, key(args[1]), args[3]!, ctx.now() + n * unitMs) ? OK : OOM;
  };
}

function incrBy(ctx: Ctx, name: string, by: number | null): Reply {
  if (by === null) return NOT_INTEGER;
  const old = get(ctx, name);
  const current = old ? toInt(old) : 0;
  if (current === null) return NOT_INTEGER;
  const next = BigInt(current) + BigInt(by);
  if (next > 9223372036854775807n || next < -9223372036854775808n) return error("ERR increment or decrement would overflow");
  return store(ctx, name, Buffer.from(String(next)), null, true) ? integer(Number(next)) : OOM;
}

function expireHandler(unitMs: number, absolute: boolean): Handler {
  return (ctx, args) => {
    const n = toInt(args[2]);
    if (n === null) return NOT_INTEGER;
    // NX/XX/GT/LT (Redis 7) are taken and not checked further.
    const at = absolute ? n * unitMs : ctx.now() + n * unitMs;
    const done = ctx.state.keyspace.expire(ctx.client.db, key(args[1]), at);
    if (done) ctx.state.dirty++;
    return integer(done ? 1 : 0);
  };
}

function ttlHandler(unitMs: number): Handler {
  return (ctx, args) => {
    const entry = ctx.state.keyspace.get(ctx.client.db, key(args[1]));
    if (!entry) return integer(-2);
    if (entry.expiresAt === null) return integer(-1);
    return integer(Math.max(0, Math.round((entry.expiresAt - ctx.now()) / unitMs)));
  };
}

function countKeys(ctx: Ctx, args: Buffer[], remove: boolean): Reply {
  let n = 0;
  for (const arg of args.slice(1)) {
    const name = key(arg);
    if (remove ? ctx.state.keyspace.delete(ctx.client.db, name) : ctx.state.keyspace.get(ctx.client.db, name)) n++;
  }
  if (remove && n > 0) ctx.state.dirty += n;
  return integer(n);
}

function flush(ctx: Ctx, args: Buffer[], all: boolean): Reply {
  if (args.length > 2 || (args.length === 2 && !["ASYNC", "SYNC"].includes(upper(args[1])))) return SYNTAX;
  ctx.state.keyspace.flush(all ? undefined : ctx.client.db);
  ctx.state.dirty++;
  return OK;
}

function scan(ctx: Ctx, args: Buffer[]): Reply {
  if (toInt(args[1]) === null || toInt(args[1])! < 0) return error("ERR invalid cursor");
  let pattern = "*";
  for (let i = 2; i < args.length; i += 2) {
    const opt = upper(args[i]);
    if (i + 1 >= args.length) return SYNTAX;
    if (opt === "MATCH") pattern = text(args[i + 1]);
    else if (opt === "COUNT") {
      const n = toInt(args[i + 1]);
      if (n === null) return NOT_INTEGER;
      if (n < 1) return SYNTAX;
    } else if (opt !== "TYPE") return SYNTAX;
  }
  // Every key fits one page: the keyspace is small, so the cursor comes back 0 at once.
  return array([bulk("0"), bulks(ctx.state.keyspace.keys(ctx.client.db, pattern))]);
}

export const STRING_COMMANDS: Record<string, Handler> = {
  ping: (_ctx, args) => (args.length > 2 ? error("ERR wrong number of arguments for 'ping' command") : args.length === 2 ? bulk(args[1]!) : simple("PONG")),
  echo: (_ctx, args) => bulk(args[1]!),
  get: (ctx, args) => {
    const value = get(ctx, key(args[1]));
    return value ? bulk(value) : NIL;
  },
  set,
  setnx: (ctx, args) => {
    if (get(ctx, key(args[1]))) return integer(0);
    return store(ctx, key(args[1]), args[2]!, null) ? integer(1) : OOM;
  },
  setex: setWithTtl("setex", 1000),
  psetex: setWithTtl("psetex", 1),
  getset: (ctx, args) => {
    const old = get(ctx, key(args[1]));
    if (!store(ctx, key(args[1]), args[2]!, null)) return OOM;
    return old ? bulk(old) : NIL;
  },
  getdel: (ctx, args) => {
    const old = get(ctx, key(args[1]));
    if (old) ctx.state.keyspace.delete(ctx.client.db, key(args[1]));
    return old ? bulk(old) : NIL;
  },
  mget: (ctx, args) => array(args.slice(1).map((a) => (get(ctx, key(a)) ? bulk(get(ctx, key(a))!) : NIL))),
  mset: (ctx, args) => {
    if (args.length % 2 === 0) return error("ERR wrong number of arguments for 'mset' command");
    for (let i = 1; i < args.length; i += 2) if (!store(ctx, key(args[i]), args[i + 1]!, null)) return OOM;
    return OK;
  },
  append: (ctx, args) => {
    const value = Buffer.concat([get(ctx, key(args[1])) ?? Buffer.alloc(0), args[2]!]);
    return store(ctx, key(args[1]), value, null, true) ? integer(value.length) : OOM;
  },
  strlen: (ctx, args) => integer(get(ctx, key(args[1]))?.length ?? 0),
  incr: (ctx, args) => incrBy(ctx, key(args[1]), 1),
  decr: (ctx, args) => incrBy(ctx, key(args[1]), -1),
  incrby: (ctx, args) => incrBy(ctx, key(args[1]), toInt(args[2])),
  decrby: (ctx, args) => {
    const n = toInt(args[2]);
    return incrBy(ctx, key(args[1]), n === null ? null : -n);
  },
  del: (ctx, args) => countKeys(ctx, args, true),
  unlink: (ctx, args) => countKeys(ctx, args, true),
  exists: (ctx, args) => countKeys(ctx, args, false),
  type: (ctx, args) => simple(get(ctx, key(args[1])) ? "string" : "none"),
  ttl: ttlHandler(1000),
  pttl: ttlHandler(1),
  expire: expireHandler(1000, false),
  pexpire: expireHandler(1, false),
  expireat: expireHandler(1000, true),
  pexpireat: expireHandler(1, true),
  persist: (ctx, args) => {
    const entry = ctx.state.keyspace.get(ctx.client.db, key(args[1]));
    if (!entry || entry.expiresAt === null) return integer(0);
    entry.expiresAt = null;
    return integer(1);
  },
  keys: (ctx, args) => bulks(ctx.state.keyspace.keys(ctx.client.db, text(args[1]))),
  scan,
  randomkey: (ctx) => {
    const keys = ctx.state.keyspace.keys(ctx.client.db);
    return keys.length ? bulk(keys[Math.floor(Math.random() * keys.length)]!) : NIL;
  },
  rename: (ctx, args) => {
    const entry = ctx.state.keyspace.get(ctx.client.db, key(args[1]));
    if (!entry) return error("ERR no such key");
    ctx.state.keyspace.delete(ctx.client.db, key(args[1]));
    return store(ctx, key(args[2]), entry.value, entry.expiresAt) ? OK : OOM;
  },
  dbsize: (ctx) => integer(ctx.state.keyspace.size(ctx.client.db)),
  flushdb: (ctx, args) => flush(ctx, args, false),
  flushall: (ctx, args) => flush(ctx, args, true),
  select: (ctx, args) => {
    const n = toInt(args[1]);
    if (n === null) return NOT_INTEGER;
    if (n < 0 || n >= DATABASES) return error("ERR DB index is out of range");
    ctx.client.db = n;
    return OK;
  },
  time: (ctx) => {
    const us = Math.floor(ctx.now() * 1000);
    return bulks([String(Math.floor(us / 1_000_000)), String(us % 1_000_000)]);
  },
};
