/**
 * CONFIG GET's parameters and their values, as Redis 7.2 lists them with the defaults of a
 * packaged server (data dir /var/lib/redis, saving on, listening on every address, protected
 * mode off: the exposed Redis that attackers look for). `port` is replaced by the real one.
 * One `name value` per line, in the order CONFIG GET * answers them.
 */
export const CONFIG_DEFAULTS: ReadonlyArray<readonly [string, string]> = `
daemonize no
bio_cpulist
slowlog-max-len 128
set-max-intset-entries 512
supervised no
proc-title-template {title} {listen-addr} {server-mode}
ignore-warnings
stream-node-max-entries 100
cluster-announce-tls-port 0
replica-announced yes
stop-writes-on-bgsave-error yes
tls-client-key-file
slave-ignore-maxmemory yes
maxmemory 0
tls-ca-cert-file
aof-load-truncated yes
shutdown-on-sigterm default
tls-dh-params-file
socket-mark-id 0
crash-memcheck-enabled yes
no-appendfsync-on-rewrite no
cluster-replica-no-failover no
activedefrag no
tls-session-cache-size 20480
lua-time-limit 5000
maxmemory-clients 0
tls-replication no
jemalloc-bg-thread yes
bind-source-addr
protected-mode no
lazyfree-lazy-user-del no
cluster-require-full-coverage yes
cluster-announce-port 0
tls-session-caching yes
aof-rewrite-incremental-fsync yes
port 6379
lazyfree-lazy-user-flush no
databases 16
dir /var/lib/redis
cluster-node-timeout 15000
list-max-ziplist-size -2
cluster-announce-hostname
unixsocket
masterauth
repl-ping-replica-period 10
cluster-replica-validity-factor 10
timeout 0
tcp-backlog 511
min-replicas-max-lag 10
repl-backlog-size 1048576
active-defrag-threshold-lower 10
zset-max-listpack-entries 128
slaveof
cluster-slave-no-failover no
rdb-del-sync-files no
bind * -::*
replica-ignore-maxmemory yes
repl-backlog-ttl 3600
logfile /var/log/redis/redis-server.log
replica-announce-port 0
oom-score-adj no
syslog-ident redis
shutdown-on-sigint default
io-threads 1
min-replicas-to-write 0
aof-timestamp-enabled no
tls-cert-file
bgsave_cpulist
tls-port 0
syslog-enabled no
active-defrag-cycle-min 1
tcp-keepalive 300
slave-lazy-flush no
save 3600 1 300 100 60 10000
tls-key-file
enable-module-command yes
acl-pubsub-default resetchannels
repl-diskless-load disabled
slowlog-log-slower-than 10000
maxmemory-eviction-tenacity 10
aof_rewrite_cpulist
replica-read-only yes
enable-protected-configs yes
zset-max-ziplist-entries 128
slave-serve-stale-data yes
repl-diskless-sync-delay 5
lfu-log-factor 10
shutdown-timeout 10
hash-max-ziplist-entries 512
lazyfree-lazy-expire no
busy-reply-threshold 5000
lazyfree-lazy-server-del no
set-proc-title yes
enable-debug-command no
syslog-facility local0
cluster-config-file nodes.conf
zset-max-ziplist-value 64
hll-sparse-max-bytes 3000
dynamic-hz yes
slave-announce-ip
tls-client-key-file-pass
active-expire-effort 1
cluster-migration-barrier 1
replica-serve-stale-data yes
tls-client-cert-file
crash-log-enabled yes
loglevel notice
aof-use-rdb-preamble yes
rdb-save-incremental-fsync yes
hz 10
notify-keyspace-events
list-compress-depth 0
sanitize-dump-payload no
appendonly no
tls-ciphersuites
replica-announce-ip
appendfilename appendonly.aof
replica-ignore-disk-write-errors no
latency-monitor-threshold 0
unixsocketperm 0
slave-read-only yes
cluster-enabled no
repl-ping-slave-period 10
replica-priority 100
cluster-announce-bus-port 0
repl-timeout 60
io-threads-do-reads no
proto-max-bulk-len 536870912
slave-priority 100
tls-prefer-server-ciphers no
tls-key-file-pass
tls-ciphers
appenddirname appendonlydir
maxmemory-samples 5
cluster-slave-validity-factor 10
tls-auth-clients yes
cluster-allow-pubsubshard-when-down yes
auto-aof-rewrite-percentage 100
acllog-max-len 128
tls-protocols
cluster-allow-reads-when-down no
requirepass
cluster-preferred-endpoint-type ip
repl-diskless-sync-max-replicas 0
client-output-buffer-limit normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60
maxmemory-policy noeviction
active-defrag-ignore-bytes 104857600
hash-max-listpack-entries 512
hash-max-listpack-value 64
replicaof
cluster-port 0
min-slaves-max-lag 10
rdbcompression yes
latency-tracking yes
tls-cluster no
slave-announce-port 0
active-defrag-max-scan-fields 1000
hash-max-ziplist-value 64
zset-max-listpack-value 64
cluster-allow-replica-migration yes
list-max-listpack-size -2
replica-lazy-flush no
tracking-table-max-keys 1000000
propagation-error-behavior ignore
masteruser
active-defrag-cycle-max 25
aof-disable-auto-gc no
cluster-announce-ip
tls-session-cache-timeout 300
tls-ca-cert-dir
latency-tracking-info-percentiles 50 99 99.9
rdbchecksum yes
activerehashing yes
repl-disable-tcp-nodelay no
always-show-logo no
dbfilename dump.rdb
appendfsync everysec
lazyfree-lazy-eviction no
disable-thp yes
maxclients 10000
auto-aof-rewrite-min-size 67108864
lfu-decay-time 1
pidfile /run/redis/redis-server.pid
min-slaves-to-write 0
oom-score-adj-values 0 200 800
aclfile
active-defrag-threshold-upper 100
cluster-link-sendbuf-limit 0
server_cpulist
client-query-buffer-limit 1073741824
stream-node-max-bytes 4096
repl-diskless-sync yes
cluster-announce-human-nodename
locale-collate
set-max-listpack-entries 128
set-max-listpack-value 64
`
  .split("\n")
  .filter(Boolean)
  .map((line) => {
    // An empty value leaves the name alone on its line (a trailing space may have been trimmed).
    const space = line.indexOf(" ");
    return space === -1 ? ([line, ""] as const) : ([line.slice(0, space), line.slice(space + 1)] as const);
  });

/** CONFIG SET refuses these: "can't set immutable config". */
export const IMMUTABLE_CONFIGS: ReadonlySet<string> = new Set(
  "daemonize bio_cpulist supervised socket-mark-id databases unixsocket tcp-backlog slaveof logfile syslog-ident io-threads bgsave_cpulist syslog-enabled enable-module-command aof_rewrite_cpulist enable-protected-configs set-proc-title enable-debug-command syslog-facility cluster-config-file appendfilename unixsocketperm cluster-enabled io-threads-do-reads appenddirname replicaof cluster-port rdbchecksum always-show-logo disable-thp pidfile aclfile server_cpulist locale-collate".split(" "),
);
