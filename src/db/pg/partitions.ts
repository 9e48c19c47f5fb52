/**
 * The daily partitions of `events` (see schema.ts): which exist, creating one, dropping the
 * old ones. Pure naming and SQL; the writer decides when.
 */
import type { SQL } from "bun";

export const DAY_MS = 86_400_000;
/** Partitions created ahead of today, so a day's first events never wait for DDL. */
export const DAYS_AHEAD = 2;
/**
 * The days around now for which a batch may create a partition: a month back (a node's spool
 * replayed after an outage) to a week ahead. An event outside (a node's clock far off, a
 * forged timestamp) goes to the default partition, so hostile timestamps cannot make
 * thousands of tables.
 */
export const MAX_DAYS_AHEAD = 7;
export const MAX_DAYS_BEHIND = 31;

/** `events_20261123`: sorts by day, readable in psql. */
export function partitionName(day: number): string {
  return `events_${new Date(day * DAY_MS).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

export function dayOfPartition(name: string): number | null {
  const m = /^events_(\d{4})(\d{2})(\d{2})$/.exec(name);
  return m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS : null;
}

/** The days that have a partition of their own. */
export async function partitionDays(sql: SQL): Promise<Set<number>> {
  const rows: { name: string }[] = await sql`
    select c.relname as name from pg_inherits i
    join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = 'events' and p.relnamespace = current_schema()::regnamespace`;
  const days = new Set<number>();
  for (const r of rows) {
    const d = dayOfPartition(r.name);
    if (d !== null) days.add(d);
  }
  return days;
}

/**
 * Creates the partition of one day. Events of that day that went to the default partition
 * before it existed move into it first (attaching would fail otherwise). Several instances
 * may try at once: an advisory lock per day makes it once.
 */
export async function createPartition(sql: SQL, day: number): Promise<void> {
  const name = partitionName(day);
  const from = day * DAY_MS;
  const to = from + DAY_MS;
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${0x68620000 + (day % 0xffff)})`;
    const [exists] = await tx`select to_regclass(${name}) is not null as yes`;
    if (exists.yes) return;
    // Identifiers cannot be parameters; `name` is made of digits by partitionName.
    await tx.unsafe(`create table "${name}" (like events including defaults)`);
    await tx.unsafe(`with moved as (delete from events_default where ts >= ${from} and ts < ${to} returning *) insert into "${name}" select * from moved`);
    await tx.unsafe(`alter table events attach partition "${name}" for values from (${from}) to (${to})`);
  });
}

/** Drops one day's partition; returns how many events it held. */
export async function dropPartition(sql: SQL, day: number): Promise<number> {
  const name = partitionName(day);
  return sql.begin(async (tx) => {
    const [r] = await tx.unsafe(`select count(*)::float8 as n from "${name}"`);
    await tx.unsafe(`drop table "${name}"`);
    return Number(r.n);
  });
}
