/**
 * Redis 7.2's command table as COMMAND reports it: every command and subcommand (`container|sub`)
 * with its arity (n: exactly n words with the name; -n: at least n) and `w` for the commands that
 * write the keyspace (refused with READONLY on a replica). The honeypot checks names and arities
 * against it exactly as Redis does before it runs anything, so a real command it does not emulate
 * still gets Redis's own argument errors, and COMMAND COUNT / COMMAND LIST agree with a real 7.2.
 */
const TABLE = `
acl:-2 acl|cat:-2 acl|deluser:-3 acl|dryrun:-4 acl|genpass:-2 acl|getuser:3 acl|help:2 acl|list:2 acl|load:2 acl|log:-2
acl|save:2 acl|setuser:-3 acl|users:2 acl|whoami:2 append:3:w asking:1 auth:-2 bgrewriteaof:1 bgsave:-1 bitcount:-2
bitfield:-2:w bitfield_ro:-2 bitop:-4:w bitpos:-3 blmove:6:w blmpop:-5:w blpop:-3:w brpop:-3:w brpoplpush:4:w
bzmpop:-5:w bzpopmax:-3:w bzpopmin:-3:w client:-2 client|caching:3 client|getname:2 client|getredir:2 client|help:2
client|id:2 client|info:2 client|kill:-3 client|list:-2 client|no-evict:3 client|pause:-3 client|reply:3
client|setinfo:4 client|setname:3 client|tracking:-3 client|trackinginfo:2 client|unblock:-3 client|unpause:2
cluster:-2 cluster|addslots:-3 cluster|addslotsrange:-4 cluster|bumpepoch:2 cluster|count-failure-reports:3
cluster|countkeysinslot:3 cluster|delslots:-3 cluster|delslotsrange:-4 cluster|failover:-2 cluster|flushslots:2
cluster|forget:3 cluster|getkeysinslot:4 cluster|help:2 cluster|info:2 cluster|keyslot:3 cluster|links:2
cluster|meet:-4 cluster|myid:2 cluster|myshardid:2 cluster|nodes:2 cluster|replicas:3 cluster|replicate:3
cluster|reset:-2 cluster|saveconfig:2 cluster|set-config-epoch:3 cluster|setslot:-4 cluster|shards:2 cluster|slaves:3
cluster|slots:2 command:-1 command|count:2 command|docs:-2 command|getkeys:-4 command|getkeysandflags:-4 command|help:2
command|info:-2 command|list:-2 config:-2 config|get:-3 config|help:2 config|resetstat:2 config|rewrite:2 config|set:-4
copy:-3:w dbsize:1 debug:-2 decr:2:w decrby:3:w del:-2:w discard:1 dump:2 echo:2 eval:-3 eval_ro:-3 evalsha:-3
evalsha_ro:-3 exec:1 exists:-2 expire:-3:w expireat:-3:w expiretime:2 failover:-1 fcall:-3 fcall_ro:-3 flushall:-1:w
flushdb:-1:w function:-2 function|delete:3 function|dump:2 function|flush:-2 function|help:2 function|kill:2
function|list:-2 function|load:-3 function|restore:-3 function|stats:2 geoadd:-5:w geodist:-4 geohash:-2 geopos:-2
georadius:-6:w georadius_ro:-6 georadiusbymember:-5:w georadiusbymember_ro:-5 geosearch:-7 geosearchstore:-8:w get:2
getbit:3 getdel:2:w getex:-2:w getrange:4 getset:3:w hdel:-3:w hello:-1 hexists:3 hget:3 hgetall:2 hincrby:4:w
hincrbyfloat:4:w hkeys:2 hlen:2 hmget:-3 hmset:-4:w hrandfield:-2 hscan:-3 hset:-4:w hsetnx:4:w hstrlen:3 hvals:2
incr:2:w incrby:3:w incrbyfloat:3:w info:-1 keys:2 lastsave:1 latency:-2 latency|doctor:2 latency|graph:3
latency|help:2 latency|histogram:-2 latency|history:3 latency|latest:2 latency|reset:-2 lcs:-3 lindex:3 linsert:5:w
llen:2 lmove:5:w lmpop:-4:w lolwut:-1 lpop:-2:w lpos:-3 lpush:-3:w lpushx:-3:w lrange:4 lrem:4:w lset:4:w ltrim:4:w
memory:-2 memory|doctor:2 memory|help:2 memory|malloc-stats:2 memory|purge:2 memory|stats:2 memory|usage:-3 mget:-2
migrate:-6:w module:-2 module|help:2 module|list:2 module|load:-3 module|loadex:-3 module|unload:3 monitor:1 move:3:w
mset:-3:w msetnx:-3:w multi:1 object:-2 object|encoding:3 object|freq:3 object|help:2 object|idletime:3
object|refcount:3 persist:2:w pexpire:-3:w pexpireat:-3:w pexpiretime:2 pfadd:-2:w pfcount:-2 pfdebug:3:w pfmerge:-2:w
pfselftest:1 ping:-1 psetex:4:w psubscribe:-2 psync:-3 pttl:2 publish:3 pubsub:-2 pubsub|channels:-2 pubsub|help:2
pubsub|numpat:2 pubsub|numsub:-2 pubsub|shardchannels:-2 pubsub|shardnumsub:-2 punsubscribe:-1 quit:-1 randomkey:1
readonly:1 readwrite:1 rename:3:w renamenx:3:w replconf:-1 replicaof:3 reset:1 restore:-4:w restore-asking:-4:w role:1
rpop:-2:w rpoplpush:3:w rpush:-3:w rpushx:-3:w sadd:-3:w save:1 scan:-2 scard:2 script:-2 script|debug:3
script|exists:-3 script|flush:-2 script|help:2 script|kill:2 script|load:3 sdiff:-2 sdiffstore:-3:w select:2 set:-3:w
setbit:4:w setex:4:w setnx:3:w setrange:4:w shutdown:-1 sinter:-2 sintercard:-3 sinterstore:-3:w sismember:3 slaveof:3
slowlog:-2 slowlog|get:-2 slowlog|help:2 slowlog|len:2 slowlog|reset:2 smembers:2 smismember:-3 smove:4:w sort:-2:w
sort_ro:-2 spop:-2:w spublish:3 srandmember:-2 srem:-3:w sscan:-3 ssubscribe:-2 strlen:2 subscribe:-2 substr:4
sunion:-2 sunionstore:-3:w sunsubscribe:-1 swapdb:3:w sync:1 time:1 touch:-2 ttl:2 type:2 unlink:-2:w unsubscribe:-1
unwatch:1 wait:3 waitaof:4 watch:-2 xack:-4:w xadd:-5:w xautoclaim:-6:w xclaim:-6:w xdel:-3:w xgroup:-2
xgroup|create:-5 xgroup|createconsumer:5 xgroup|delconsumer:5 xgroup|destroy:4 xgroup|help:2 xgroup|setid:-5 xinfo:-2
xinfo|consumers:4 xinfo|groups:3 xinfo|help:2 xinfo|stream:-3 xlen:2 xpending:-3 xrange:-4 xread:-4 xreadgroup:-7:w
xrevrange:-4 xsetid:-3:w xtrim:-4:w zadd:-4:w zcard:2 zcount:4 zdiff:-3 zdiffstore:-4:w zincrby:4:w zinter:-3
zintercard:-3 zinterstore:-4:w zlexcount:4 zmpop:-4:w zmscore:-3 zpopmax:-2:w zpopmin:-2:w zrandmember:-2 zrange:-4
zrangebylex:-4 zrangebyscore:-4 zrangestore:-5:w zrank:3 zrem:-3:w zremrangebylex:4:w zremrangebyrank:4:w
zremrangebyscore:4:w zrevrange:-4 zrevrangebylex:-4 zrevrangebyscore:-4 zrevrank:3 zscan:-3 zscore:3 zunion:-3
zunionstore:-4:wclient|no-touch:3
`;

export interface CommandSpec {
  /** Lower case; `container|sub` for a subcommand, as in Redis's error messages. */
  name: string;
  arity: number;
  write: boolean;
}

export const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(
  TABLE.split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const [name, arity, flag] = entry.split(":");
      return [name!, { name: name!, arity: Number(arity), write: flag === "w" }];
    }),
);

/** Commands with subcommands: CONFIG, CLIENT, ... (a `|` entry exists for them). */
export const CONTAINERS: ReadonlySet<string> = new Set([...COMMANDS.keys()].filter((n) => n.includes("|")).map((n) => n.split("|")[0]!));

/** Top-level commands, as COMMAND COUNT counts them. */
export const TOP_LEVEL: readonly string[] = [...COMMANDS.keys()].filter((n) => !n.includes("|"));

export type Lookup =
  | { kind: "found"; spec: CommandSpec }
  | { kind: "unknown" }
  /** A container whose subcommand does not exist: "unknown subcommand 'x'. Try CONFIG HELP." */
  | { kind: "unknown-subcommand"; container: string };

/** Redis's lookupCommand: the name case-insensitive, then the subcommand when it is a container. */
export function lookupCommand(args: readonly Buffer[]): Lookup {
  const name = args[0]!.toString("latin1").toLowerCase();
  const spec = COMMANDS.get(name);
  if (!spec) return { kind: "unknown" };
  if (!CONTAINERS.has(name) || args.length < 2) return { kind: "found", spec };
  const sub = COMMANDS.get(`${name}|${args[1]!.toString("latin1").toLowerCase()}`);
  return sub ? { kind: "found", spec: sub } : { kind: "unknown-subcommand", container: name };
}

/** Redis's arity rule: n means exactly n words, -n at least n. */
export function arityOk(spec: CommandSpec, argc: number): boolean {
  return spec.arity > 0 ? argc === spec.arity : argc >= -spec.arity;
}
