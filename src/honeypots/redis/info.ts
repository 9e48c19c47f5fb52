/**
 * INFO's text, section by section in Redis 7's order and field names, with the figures of a
 * small, long-running server. The first lines are what scanners and nmap read ("# Server",
 * redis_version, os, arch_bits, tcp_port, uptime); the rest follows the fields of a real 7.0/7.2
 * closely enough that a human reading it sees nothing missing.
 */
import { atLeast, type ServerFacts } from "./context.ts";
import type { AddressState } from "./state.ts";

const DEFAULT_SECTIONS = ["server", "clients", "memory", "persistence", "stats", "replication", "cpu", "modules", "errorstats", "cluster", "keyspace"];
const ALL_SECTIONS = [...DEFAULT_SECTIONS.slice(0, 8), "commandstats", "errorstats", "latencystats", "cluster", "keyspace"];

/** Redis's bytesToHuman. */
export function human(n: number): string {
  const units = ["K", "M", "G", "T", "P"];
  if (n < 1024) return `${n}B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)}${units[unit]}`;
}

/** The sections INFO's arguments ask for: none or `default`, `all`, `everything`, or names. */
export function infoSections(args: readonly string[]): string[] {
  if (args.length === 0) return DEFAULT_SECTIONS;
  const wanted = new Set<string>();
  for (const arg of args.map((a) => a.toLowerCase())) {
    const names = arg === "default" ? DEFAULT_SECTIONS : arg === "all" || arg === "everything" ? ALL_SECTIONS : [arg === "module_list" ? "modules" : arg];
    for (const name of names) wanted.add(name);
  }
  return ALL_SECTIONS.filter((s) => wanted.has(s));
}

export function infoText(sections: readonly string[], server: ServerFacts, state: AddressState, now: number): string {
  const v72 = atLeast(server.version, 7, 2);
  const uptime = Math.floor((now - server.startedAt) / 1000);
  const used = 1_000_000 + state.keyspace.bytes * 2 + server.connectedClients() * 22_000;
  const rss = 7_000_000 + used * 3;
  const calls = [...state.commandCounts];
  const errors = [...state.errorCounts];
  const body: Record<string, string[]> = {
    server: [
      `redis_version:${server.version}`,
      "redis_git_sha1:00000000",
      "redis_git_dirty:0",
      `redis_build_id:${server.buildId}`,
      "redis_mode:standalone",
      `os:${server.os}`,
      "arch_bits:64",
      "monotonic_clock:POSIX clock_gettime",
      "multiplexing_api:epoll",
      "atomicvar_api:c11-builtin",
      "gcc_version:12.2.0",
      `process_id:${server.processId}`,
      "process_supervised:no",
      `run_id:${server.runId}`,
      `tcp_port:${server.port}`,
      `server_time_usec:${now * 1000}`,
      `uptime_in_seconds:${uptime}`,
      `uptime_in_days:${Math.floor(uptime / 86400)}`,
      "hz:10",
      "configured_hz:10",
      `lru_clock:${Math.floor(now / 1000) & 0xffffff}`,
      "executable:/usr/bin/redis-server",
      "config_file:/etc/redis/redis.conf",
      "io_threads_active:0",
    ],
    clients: [
      `connected_clients:${server.connectedClients()}`,
      "cluster_connections:0",
      "maxclients:10000",
      "client_recent_max_input_buffer:20480",
      "client_recent_max_output_buffer:0",
      "blocked_clients:0",
      "tracking_clients:0",
      "clients_in_timeout_table:0",
      ...(v72 ? ["total_blocking_keys:0", "total_blocking_keys_on_nokey:0"] : []),
    ],
    memory: [
      `used_memory:${used}`,
      `used_memory_human:${human(used)}`,
      `used_memory_rss:${rss}`,
      `used_memory_rss_human:${human(rss)}`,
      `used_memory_peak:${used + 180_304}`,
      `used_memory_peak_human:${human(used + 180_304)}`,
      `used_memory_peak_perc:${((used / (used + 180_304)) * 100).toFixed(2)}%`,
      "used_memory_overhead:876480",
      "used_memory_startup:876144",
      `used_memory_dataset:${used - 876480}`,
      `used_memory_dataset_perc:${(((used - 876480) / (used - 876144)) * 100).toFixed(2)}%`,
      `allocator_allocated:${used + 600_000}`,
      `allocator_active:${used + 950_000}`,
      `allocator_resident:${used + 3_700_000}`,
      "total_system_memory:8323186688",
      "total_system_memory_human:7.75G",
      "used_memory_lua:31744",
      "used_memory_vm_eval:31744",
      "used_memory_lua_human:31.00K",
      "used_memory_scripts_eval:0",
      `number_of_cached_scripts:${state.scripts.size}`,
      "number_of_functions:0",
      "number_of_libraries:0",
      "used_memory_vm_functions:32768",
      "used_memory_vm_total:64512",
      "used_memory_vm_total_human:63.00K",
      "used_memory_functions:184",
      "used_memory_scripts:184",
      "used_memory_scripts_human:184B",
      "maxmemory:0",
      "maxmemory_human:0B",
      "maxmemory_policy:noeviction",
      "allocator_frag_ratio:1.15",
      "allocator_frag_bytes:349024",
      "allocator_rss_ratio:2.04",
      "allocator_rss_bytes:2748416",
      `rss_overhead_ratio:${(rss / (used + 3_700_000)).toFixed(2)}`,
      "rss_overhead_bytes:4931584",
      `mem_fragmentation_ratio:${(rss / used).toFixed(2)}`,
      `mem_fragmentation_bytes:${rss - used}`,
      "mem_not_counted_for_evict:0",
      "mem_replication_backlog:0",
      "mem_total_replication_buffers:0",
      "mem_clients_slaves:0",
      `mem_clients_normal:${server.connectedClients() * 22_000}`,
      "mem_cluster_links:0",
      "mem_aof_buffer:0",
      "mem_allocator:jemalloc-5.3.0",
      "active_defrag_running:0",
      "lazyfree_pending_objects:0",
      "lazyfreed_objects:0",
    ],
    persistence: [
      "loading:0",
      "async_loading:0",
      "current_cow_peak:0",
      "current_cow_size:0",
      "current_cow_size_age:0",
      "current_fork_perc:0.00",
      "current_save_keys_processed:0",
      "current_save_keys_total:0",
      `rdb_changes_since_last_save:${state.dirty}`,
      "rdb_bgsave_in_progress:0",
      `rdb_last_save_time:${state.lastSave}`,
      "rdb_last_bgsave_status:ok",
      "rdb_last_bgsave_time_sec:0",
      "rdb_current_bgsave_time_sec:-1",
      `rdb_saves:${state.saves}`,
      "rdb_last_cow_size:0",
      "rdb_last_load_keys_expired:0",
      "rdb_last_load_keys_loaded:0",
      "aof_enabled:0",
      "aof_rewrite_in_progress:0",
      "aof_rewrite_scheduled:0",
      "aof_last_rewrite_time_sec:-1",
      "aof_current_rewrite_time_sec:-1",
      "aof_last_bgrewrite_status:ok",
      "aof_rewrites:0",
      "aof_rewrites_consecutive_failures:0",
      "aof_last_write_status:ok",
      "aof_last_cow_size:0",
      "module_fork_in_progress:0",
      "module_fork_last_cow_size:0",
    ],
    stats: [
      `total_connections_received:${server.totals.connections}`,
      `total_commands_processed:${server.totals.commands}`,
      "instantaneous_ops_per_sec:0",
      `total_net_input_bytes:${server.totals.commands * 31}`,
      `total_net_output_bytes:${server.totals.commands * 187}`,
      "total_net_repl_input_bytes:0",
      "total_net_repl_output_bytes:0",
      "instantaneous_input_kbps:0.00",
      "instantaneous_output_kbps:0.00",
      "instantaneous_input_repl_kbps:0.00",
      "instantaneous_output_repl_kbps:0.00",
      "rejected_connections:0",
      "sync_full:0",
      "sync_partial_ok:0",
      "sync_partial_err:0",
      "expired_keys:0",
      "expired_stale_perc:0.00",
      "expired_time_cap_reached_count:0",
      `expire_cycle_cpu_milliseconds:${Math.floor(uptime / 60)}`,
      "evicted_keys:0",
      "evicted_clients:0",
      "total_eviction_exceeded_time:0",
      "current_eviction_exceeded_time:0",
      "keyspace_hits:0",
      "keyspace_misses:0",
      "pubsub_channels:0",
      "pubsub_patterns:0",
      "pubsubshard_channels:0",
      `latest_fork_usec:${state.saves > 0 ? 412 : 0}`,
      `total_forks:${state.saves}`,
      "migrate_cached_sockets:0",
      "slave_expires_tracked_keys:0",
      "active_defrag_hits:0",
      "active_defrag_misses:0",
      "active_defrag_key_hits:0",
      "active_defrag_key_misses:0",
      "total_active_defrag_time:0",
      "current_active_defrag_time:0",
      "tracking_total_keys:0",
      "tracking_total_items:0",
      "tracking_total_prefixes:0",
      "unexpected_error_replies:0",
      `total_error_replies:${errors.reduce((n, [, c]) => n + c, 0)}`,
      "dump_payload_sanitizations:0",
      `total_reads_processed:${server.totals.commands + server.totals.connections}`,
      `total_writes_processed:${server.totals.commands}`,
      "io_threaded_reads_processed:0",
      "io_threaded_writes_processed:0",
      "reply_buffer_shrinks:0",
      "reply_buffer_expands:0",
      ...(v72 ? [`eventloop_cycles:${uptime * 10 + server.totals.commands}`, `eventloop_duration_sum:${uptime * 412}`, "eventloop_duration_cmd_sum:0", "instantaneous_eventloop_cycles_per_sec:10", "instantaneous_eventloop_duration_usec:38"] : []),
    ],
    replication: replication(server, state),
    cpu: [
      `used_cpu_sys:${(uptime * 0.00071).toFixed(6)}`,
      `used_cpu_user:${(uptime * 0.00093).toFixed(6)}`,
      "used_cpu_sys_children:0.000000",
      "used_cpu_user_children:0.000000",
      `used_cpu_sys_main_thread:${(uptime * 0.0007).toFixed(6)}`,
      `used_cpu_user_main_thread:${(uptime * 0.00092).toFixed(6)}`,
    ],
    modules: [],
    commandstats: calls.map(([name, n]) => `cmdstat_${name}:calls=${n},usec=${n * 3},usec_per_call=3.00,rejected_calls=0,failed_calls=0`),
    errorstats: errors.map(([prefix, n]) => `errorstat_${prefix}:count=${n}`),
    latencystats: calls.map(([name]) => `latency_percentiles_usec_${name}:p50=3.007,p99=8.031,p99.9=8.031`),
    cluster: ["cluster_enabled:0"],
    keyspace: state.keyspace.summary().map(({ db, keys, expires }) => `db${db}:keys=${keys},expires=${expires},avg_ttl=0`),
  };
  const titles: Record<string, string> = { cpu: "CPU" };
  return sections
    .map((name) => `# ${titles[name] ?? name[0]!.toUpperCase() + name.slice(1)}\r\n${body[name]!.map((l) => `${l}\r\n`).join("")}`)
    .join("\r\n");
}

function replication(server: ServerFacts, state: AddressState): string[] {
  const master = state.master;
  const replica = master
    ? [
        `master_host:${master.host}`,
        `master_port:${master.port}`,
        "master_link_status:down",
        "master_last_io_seconds_ago:-1",
        "master_sync_in_progress:0",
        "slave_read_repl_offset:1",
        "slave_repl_offset:1",
        "master_link_down_since_seconds:-1",
        "slave_priority:100",
        "slave_read_only:1",
        "replica_announced:1",
      ]
    : [];
  return [
    `role:${master ? "slave" : "master"}`,
    ...replica,
    "connected_slaves:0",
    "master_failover_state:no-failover",
    `master_replid:${server.replId}`,
    "master_replid2:0000000000000000000000000000000000000000",
    "master_repl_offset:0",
    "second_repl_offset:-1",
    "repl_backlog_active:0",
    "repl_backlog_size:1048576",
    "repl_backlog_first_byte_offset:0",
    "repl_backlog_histlen:0",
  ];
}
