/**
 * The commands of the known attacks on an exposed Redis, each recorded as an event of its own
 * with what the attack carries, and answered as a permissive Redis 7 would, so the attacker goes
 * on to the next step:
 * - the file write: CONFIG SET dir + dbfilename, then SAVE/BGSAVE writes the keys' values (a cron
 *   line, an SSH key) into a file of the attacker's choice (`attack.config_write`, and the
 *   values as a captured file, `session.file_upload`);
 * - the rogue master: SLAVEOF/REPLICAOF to the attacker's server, which would send a module as
 *   the replica's dump file (`attack.rogue_master`); never connected to;
 * - MODULE LOAD of that file (`attack.module_load`), answered as a file that is no module;
 * - Lua through EVAL, EVALSHA, SCRIPT LOAD, FUNCTION LOAD (`attack.eval`); never run.
 */
import { CONFIG_DEFAULTS } from "./config-defaults.ts";
import { type Ctx, type Handler, text, upper } from "./context.ts";
import { clip, clipList } from "./render.ts";
import { array, bulk, error, integer, NIL, OK, type Reply, simple } from "./resp.ts";
import { NOT_INTEGER, SYNTAX, toInt } from "./strings.ts";

/** Values listed in a config_write event (all of them are in the captured file). */
const MAX_VALUES = 16;
const VALUE_BYTES = 4096;
const SCRIPT_BYTES = 16384;
const HOST_BYTES = 256;

const DEFAULTS = new Map(CONFIG_DEFAULTS);
const setting = (ctx: Ctx, name: string) => ctx.state.configValue(name, DEFAULTS.get(name) ?? "");
const shown = (value: string, max = VALUE_BYTES) => clip(Buffer.from(value, "latin1"), max).value;

/** Where a SAVE would write now, as text for an event (never used as a path here). */
function target(ctx: Ctx): { dir: string; dbfilename: string; path: string } {
  const dir = shown(setting(ctx, "dir"));
  const dbfilename = shown(setting(ctx, "dbfilename"));
  return { dir, dbfilename, path: dir.endsWith("/") ? dir + dbfilename : `${dir}/${dbfilename}` };
}

function recordWrite(ctx: Ctx, command: string): void {
  const where = target(ctx);
  const values = ctx.state.keyspace.values();
  // What cron or sshd would find among the dump's bytes: the values, each on lines of its own.
  const payload = Buffer.concat(values.flatMap((v, i) => (i === 0 ? [v] : [Buffer.from("\n"), v])));
  const listed = clipList(values, MAX_VALUES, VALUE_BYTES);
  const file = payload.length > 0 ? ctx.effects.capture(payload, { source: "redis.attack.config_write", url: where.path, filename: where.dbfilename }) : null;
  const saved = file ? { shasum: file.shasum, outfile: file.outfile, size: file.size } : {};
  ctx.effects.event("attack.config_write", { command, ...where, keys: values.length, values: listed.value, ...saved, ...(listed.truncated ? { truncated: true } : {}) });
  if (file) ctx.effects.event("session.file_upload", { filename: where.dbfilename, url: where.path, destfile: where.path, ...saved });
}

function save(command: "SAVE" | "BGSAVE"): Handler {
  return (ctx, args) => {
    if (command === "BGSAVE" && args.length > 1 && !(args.length === 2 && upper(args[1]) === "SCHEDULE")) return SYNTAX;
    if (ctx.state.persistenceRedirected) recordWrite(ctx, command);
    ctx.state.saves++;
    ctx.state.dirty = 0;
    ctx.state.lastSave = Math.floor(ctx.now() / 1000);
    return command === "SAVE" ? OK : simple("Background saving started");
  };
}

function replicaof(command: string): Handler {
  return (ctx, args) => {
    if (upper(args[1]) === "NO" && upper(args[2]) === "ONE") {
      ctx.state.master = null;
      return OK;
    }
    const port = toInt(args[2]);
    if (port === null || port < 0 || port > 65535) return error("ERR Invalid master port");
    const host = clip(args[1]!, HOST_BYTES).value;
    const master = ctx.state.master;
    if (master && master.host.toLowerCase() === host.toLowerCase() && master.port === port) return simple("OK Already connected to specified master");
    ctx.state.master = { host, port };
    // The master would send its payload as the replica's dump file: dir/dbfilename.
    ctx.effects.event("attack.rogue_master", { command, host, port, ...target(ctx) });
    return OK;
  };
}

function moduleLoad(command: string, argsFrom: number): Handler {
  return (ctx, args) => {
    const listed = clipList(args.slice(argsFrom));
    const path = clip(args[2]!, VALUE_BYTES);
    ctx.effects.event("attack.module_load", { command, path: path.value, args: listed.value, ...(path.truncated || listed.truncated ? { truncated: true } : {}) });
    return error("ERR Error loading the extension. Please check the server logs.");
  };
}

/**
 * What EVAL answers for a script that is never run: the literal a trivial probe returns
 * (`return 1`, `return 'x'`), as Redis converts it, and nil for anything else.
 */
export function evalReply(script: string): Reply {
  const m = /^\s*return\s+(?:(-?\d{1,15})(?:\.\d*)?|"([^"\\]*)"|'([^'\\]*)'|(true|false|nil))\s*;?\s*$/.exec(script);
  if (!m) return NIL;
  if (m[1] !== undefined) return integer(Number(m[1]));
  if (m[2] !== undefined || m[3] !== undefined) return bulk(m[2] ?? m[3]!);
  return m[4] === "true" ? integer(1) : NIL;
}

const sha1 = (script: Buffer) => new Bun.CryptoHasher("sha1").update(script).digest("hex");

function recordScript(ctx: Ctx, command: string, sha: string, script: Buffer | null, keys: Buffer[] = [], rest: Buffer[] = []): void {
  const body = script ? clip(script, SCRIPT_BYTES) : null;
  const k = clipList(keys);
  const a = clipList(rest);
  const truncated = body?.truncated || k.truncated || a.truncated;
  ctx.effects.event("attack.eval", { command, script: body?.value ?? null, sha1: sha, numkeys: keys.length, keys: k.value, args: a.value, ...(truncated ? { truncated: true } : {}) });
}

function evalCommand(command: string, bySha: boolean): Handler {
  return (ctx, args) => {
    const numkeys = toInt(args[2]);
    if (numkeys === null) return NOT_INTEGER;
    if (numkeys > args.length - 3) return error("ERR Number of keys can't be greater than number of args");
    if (numkeys < 0) return error("ERR Number of keys can't be negative");
    const sha = bySha ? text(args[1]).toLowerCase().slice(0, 40) : sha1(args[1]!);
    const script = bySha ? (ctx.state.scripts.get(sha) ?? null) : args[1]!;
    recordScript(ctx, command, sha, script, args.slice(3, 3 + numkeys), args.slice(3 + numkeys));
    if (!script) return error("NOSCRIPT No matching script. Please use EVAL.");
    ctx.state.keepScript(sha, script);
    return evalReply(script.toString("latin1"));
  };
}

export const ATTACK_COMMANDS: Record<string, Handler> = {
  save: save("SAVE"),
  bgsave: save("BGSAVE"),
  bgrewriteaof: () => simple("Background append only file rewriting started"),
  slaveof: replicaof("SLAVEOF"),
  replicaof: replicaof("REPLICAOF"),
  "module|load": moduleLoad("MODULE LOAD", 3),
  "module|loadex": moduleLoad("MODULE LOADEX", 3),
  "module|list": () => array([]),
  "module|unload": () => error("ERR Error unloading module: no such module with that name"),
  eval: evalCommand("EVAL", false),
  eval_ro: evalCommand("EVAL_RO", false),
  evalsha: evalCommand("EVALSHA", true),
  evalsha_ro: evalCommand("EVALSHA_RO", true),
  "script|load": (ctx, args) => {
    const sha = sha1(args[2]!);
    recordScript(ctx, "SCRIPT LOAD", sha, args[2]!);
    ctx.state.keepScript(sha, args[2]!);
    return bulk(sha);
  },
  "script|exists": (ctx, args) => array(args.slice(2).map((a) => integer(ctx.state.scripts.has(text(a).toLowerCase()) ? 1 : 0))),
  "script|flush": (ctx) => {
    ctx.state.scripts.clear();
    return OK;
  },
  "script|kill": () => error("NOTBUSY No scripts in execution right now."),
  "function|load": (ctx, args) => {
    const code = args[args.length - 1]!;
    recordScript(ctx, "FUNCTION LOAD", sha1(code), code);
    const name = /^#!lua name=([A-Za-z0-9_]+)/.exec(code.toString("latin1"));
    return name ? bulk(name[1]!) : error("ERR Missing library metadata");
  },
  fcall: () => error("ERR Function not found"),
  fcall_ro: () => error("ERR Function not found"),
};
