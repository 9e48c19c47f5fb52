/**
 * Connection and server commands: AUTH and HELLO (with the login events), CLIENT, CONFIG,
 * COMMAND, INFO, ROLE, ACL, RESET, QUIT, as Redis 7 answers them.
 */
import { globMatch } from "./glob.ts";
import { COMMANDS, TOP_LEVEL } from "./command-table.ts";
import { CONFIG_DEFAULTS, IMMUTABLE_CONFIGS } from "./config-defaults.ts";
import { asPrinted, atLeast, type Client, type Ctx, type Handler, text, upper } from "./context.ts";
import { infoSections, infoText } from "./info.ts";
import { clip } from "./render.ts";
import { array, bulk, bulks, error, integer, map, NIL, OK, type Reply, simple, verbatim } from "./resp.ts";
import { SYNTAX, toInt } from "./strings.ts";

const WRONGPASS = error("WRONGPASS invalid username-password pair or user is disabled.");
const CREDENTIAL_BYTES = 1024;

/** The password the default user has now: the pot's, or one an attacker set with CONFIG SET. */
export function requiredPassword(ctx: Pick<Ctx, "state" | "server">): string {
  return ctx.state.configValue("requirepass", ctx.server.password);
}

/** AUTH's check (also HELLO ... AUTH): records the attempt and answers as Redis 7. */
function authenticate(ctx: Ctx, username: Buffer, password: Buffer, userGiven: boolean): Reply | null {
  const required = requiredPassword(ctx);
  const user = text(username);
  let refusal: Reply | null;
  if (required === "") {
    // The default user has `nopass`: any password for it works, a bare AUTH is a mistake.
    refusal = !userGiven
      ? error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
      : user === "default"
        ? null
        : WRONGPASS;
  } else {
    refusal = user === "default" && text(password) === required ? null : WRONGPASS;
  }
  const u = clip(username, CREDENTIAL_BYTES);
  const p = clip(password, CREDENTIAL_BYTES);
  ctx.effects.event(refusal ? "login.failed" : "login.success", { username: u.value, password: p.value, ...(u.truncated || p.truncated ? { truncated: true } : {}) });
  if (!refusal) {
    ctx.client.authenticated = true;
    ctx.client.user = "default";
  }
  return refusal;
}

function hello(ctx: Ctx, args: Buffer[]): Reply {
  let version: number | null = null;
  if (args.length >= 2) {
    const v = toInt(args[1]);
    if (v === null) return error("ERR Protocol version is not an integer or out of range");
    if (v < 2 || v > 3) return error("NOPROTO unsupported protocol version");
    version = v;
  }
  let auth: [Buffer, Buffer] | null = null;
  let name: Buffer | null = null;
  for (let j = 2; j < args.length; j++) {
    const more = args.length - 1 - j;
    const opt = upper(args[j]);
    if (opt === "AUTH" && more >= 2) {
      auth = [args[j + 1]!, args[j + 2]!];
      j += 2;
    } else if (opt === "SETNAME" && more >= 1) {
      name = args[++j]!;
    } else {
      return error(`ERR Syntax error in HELLO option '${asPrinted(args[j]!, 1024)}'`);
    }
  }
  if (auth) {
    const refused = authenticate(ctx, auth[0], auth[1], true);
    if (refused) return refused;
  }
  if (!ctx.client.authenticated) {
    const form = atLeast(ctx.server.version, 7, 2) ? "HELLO <proto> AUTH <user> <pass>" : "HELLO AUTH <user> <pass>";
    return error(`NOAUTH HELLO must be called with the client already authenticated, otherwise the ${form} option can be used to authenticate the client and select the RESP protocol version at the same time`);
  }
  if (name) {
    const refused = setName(ctx.client, name);
    if (refused) return refused;
  }
  if (version !== null) ctx.client.resp = version as 2 | 3;
  return map([
    [bulk("server"), bulk("redis")],
    [bulk("version"), bulk(ctx.server.version)],
    [bulk("proto"), integer(ctx.client.resp)],
    [bulk("id"), integer(ctx.client.id)],
    [bulk("mode"), bulk("standalone")],
    [bulk("role"), bulk(ctx.state.master ? "replica" : "master")],
    [bulk("modules"), array([])],
  ]);
}

function setName(client: Client, name: Buffer): Reply | null {
  for (const b of name) if (b < 0x21 || b > 0x7e) return error("ERR Client names cannot contain spaces, newlines or special characters.");
  client.name = name.toString("latin1");
  return null;
}

/** One line of CLIENT LIST / CLIENT INFO, Redis 7.2's fields (7.0 has no lib-name, lib-ver). */
function clientLine(ctx: Ctx): string {
  const c = ctx.client;
  const now = ctx.now();
  const lib = atLeast(ctx.server.version, 7, 2) ? ` lib-name=${c.libName} lib-ver=${c.libVer}` : "";
  return (
    `id=${c.id} addr=${c.addr} laddr=${c.laddr} fd=${c.fd} name=${c.name} age=${Math.floor((now - c.createdAt) / 1000)} ` +
    `idle=0 flags=${c.multi ? "x" : "N"} db=${c.db} sub=0 psub=0 ssub=0 multi=${c.multi ? c.multi.queue.length : -1} qbuf=26 qbuf-free=20448 ` +
    `argv-mem=10 multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem=0 tot-mem=22426 events=r cmd=${c.lastCommand} user=${c.user} redir=-1 resp=${c.resp}${lib}\n`
  );
}

function help(container: string): Reply {
  return array([simple(`${container} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:`), simple("HELP"), simple("    Print this help.")]);
}

/** CONFIG GET's value of a parameter, for this address. */
function configValue(ctx: Ctx, name: string, fallback: string): string {
  switch (name) {
    case "port":
      return String(ctx.server.port);
    case "requirepass":
      return requiredPassword(ctx);
    case "replicaof":
    case "slaveof":
      return ctx.state.master ? `${ctx.state.master.host} ${ctx.state.master.port}` : "";
    default:
      return ctx.state.configValue(name, fallback);
  }
}

function configGet(ctx: Ctx, args: Buffer[]): Reply {
  const patterns = args.slice(2).map((a) => text(a));
  const entries: Array<[Reply, Reply]> = [];
  for (const [name, value] of CONFIG_DEFAULTS) {
    if (patterns.some((p) => globMatch(p, name, true))) entries.push([bulk(name), bulk(configValue(ctx, name, value))]);
  }
  return map(entries);
}

const KNOWN_CONFIGS = new Set(CONFIG_DEFAULTS.map(([name]) => name));

function configSet(ctx: Ctx, args: Buffer[]): Reply {
  if ((args.length - 2) % 2 !== 0) return SYNTAX;
  const changes: Array<[string, string]> = [];
  for (let i = 2; i < args.length; i += 2) {
    const name = text(args[i]).toLowerCase();
    const value = text(args[i + 1]);
    if (!KNOWN_CONFIGS.has(name)) return error(`ERR Unknown option or number of arguments for CONFIG SET - '${asPrinted(args[i]!, 1024)}'`);
    const failed = (why: string) => error(`ERR CONFIG SET failed (possibly related to argument '${name}') - ${why}`);
    if (IMMUTABLE_CONFIGS.has(name)) return failed("can't set immutable config");
    if (name === "dbfilename" && value.includes("/")) return failed("dbfilename can't be a path, just a filename");
    changes.push([name, value]);
  }
  for (const [name, value] of changes) {
    ctx.state.config.set(name, value);
    if (name === "dir" || name === "dbfilename") ctx.state.persistenceRedirected = true;
  }
  return OK;
}

function commandInfo(name: string): Reply {
  const spec = COMMANDS.get(name);
  if (!spec) return NIL;
  const flags = spec.write ? [simple("write"), simple("denyoom")] : [simple("fast")];
  return array([bulk(name), integer(spec.arity), array(flags), integer(0), integer(0), integer(0), array([]), array([]), array([]), array([])]);
}

export const ADMIN_COMMANDS: Record<string, Handler> = {
  auth: (ctx, args) => {
    if (args.length > 3) return SYNTAX;
    const userGiven = args.length === 3;
    return authenticate(ctx, userGiven ? args[1]! : Buffer.from("default"), args[args.length - 1]!, userGiven) ?? OK;
  },
  hello,
  quit: () => ({ reply: OK, close: true }),
  reset: (ctx) => {
    Object.assign(ctx.client, { db: 0, resp: 2, name: "", multi: null, authenticated: requiredPassword(ctx) === "" });
    return simple("RESET");
  },
  info: (ctx, args) => verbatim(infoText(infoSections(args.slice(1).map((a) => text(a))), ctx.server, ctx.state, ctx.now())),
  role: (ctx) =>
    ctx.state.master
      ? array([bulk("slave"), bulk(ctx.state.master.host), integer(ctx.state.master.port), bulk("connect"), integer(-1)])
      : array([bulk("master"), integer(0), array([])]),
  lastsave: (ctx) => integer(ctx.state.lastSave),
  monitor: () => OK,
  "client|id": (ctx) => integer(ctx.client.id),
  "client|setname": (ctx, args) => setName(ctx.client, args[2]!) ?? OK,
  "client|getname": (ctx) => (ctx.client.name ? bulk(ctx.client.name) : NIL),
  "client|list": (ctx) => verbatim(clientLine(ctx)),
  "client|info": (ctx) => verbatim(clientLine(ctx)),
  "client|kill": (_ctx, args) => (args.length === 3 ? error("ERR No such client") : integer(0)),
  "client|setinfo": (ctx, args) => {
    const attr = upper(args[2]);
    if (attr !== "LIB-NAME" && attr !== "LIB-VER") return error(`ERR Unrecognized option '${asPrinted(args[2]!, 1024)}'`);
    if (attr === "LIB-NAME") ctx.client.libName = clip(args[3]!, 128).value;
    else ctx.client.libVer = clip(args[3]!, 128).value;
    return OK;
  },
  "client|getredir": () => integer(-1),
  "client|unblock": () => integer(0),
  "config|get": configGet,
  "config|set": configSet,
  "config|resetstat": () => OK,
  "config|rewrite": () => OK,
  command: () => array(TOP_LEVEL.map(commandInfo)),
  "command|count": () => integer(TOP_LEVEL.length),
  "command|list": () => bulks(TOP_LEVEL),
  "command|info": (_ctx, args) => array((args.length > 2 ? args.slice(2).map((a) => text(a).toLowerCase()) : TOP_LEVEL).map(commandInfo)),
  // redis-cli asks for the docs to show hints; with none it shows none.
  "command|docs": () => map([]),
  "acl|whoami": (ctx) => bulk(ctx.client.user),
  "acl|users": () => bulks(["default"]),
  "acl|list": (ctx) => {
    const pass = requiredPassword(ctx);
    const secret = pass === "" ? "nopass" : `#${new Bun.CryptoHasher("sha256").update(pass, "latin1").digest("hex")}`;
    return bulks([`user default on ${secret} sanitize-payload ~* &* +@all`]);
  },
  debug: () =>
    error('ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.'),
};

/** CONFIG HELP, CLIENT HELP, ...: the first lines of Redis's help text. */
export function containerHelp(container: string): Reply {
  return help(container.toUpperCase());
}
