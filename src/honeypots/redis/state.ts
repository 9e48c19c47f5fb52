/**
 * What the honeypot remembers for one attacker address: the keyspace, CONFIG SET's changes, the
 * master after SLAVEOF, scripts loaded. Real Redis keeps this server-wide; here each source
 * address sees a server of its own, so attackers never see each other's data, while an attack
 * spread over several connections, as the common worm scripts do it (one `redis-cli` call per
 * step: SET, CONFIG SET dir, CONFIG SET dbfilename, SAVE), is still seen as one chain.
 * The number of addresses remembered is bounded; the least recently seen idle one is forgotten.
 */
import { Keyspace, type KeyspaceLimits } from "./keyspace.ts";

/** Scripts kept for EVALSHA per address, and their size; Redis keeps them until SCRIPT FLUSH. */
const MAX_SCRIPTS = 32;
const MAX_SCRIPT_BYTES = 64 * 1024;

export class AddressState {
  readonly keyspace: Keyspace;
  /** CONFIG SET's values, by parameter name. */
  readonly config = new Map<string, string>();
  /** CONFIG SET has named the file a SAVE writes (dir or dbfilename): the write chain has begun. */
  persistenceRedirected = false;
  /** After SLAVEOF/REPLICAOF host port; never connected to. */
  master: { host: string; port: number } | null = null;
  /** Changes since the last SAVE, for INFO persistence. */
  dirty = 0;
  saves = 0;
  lastSave: number;
  readonly scripts = new Map<string, Buffer>();
  /** Calls per command and errors per prefix, for INFO commandstats and errorstats. Their keys
   * are names from the command table and the pot's own error prefixes, so both stay small. */
  readonly commandCounts = new Map<string, number>();
  readonly errorCounts = new Map<string, number>();
  connections = 0;

  constructor(limits: KeyspaceLimits, now: () => number) {
    this.keyspace = new Keyspace(limits, now);
    // The last save of a server that saves every hour at most when little changes.
    this.lastSave = Math.floor(now() / 1000) - 1200 - Math.floor(Math.random() * 2400);
  }

  configValue(name: string, fallback: string): string {
    return this.config.get(name) ?? fallback;
  }

  /** Keeps a script for EVALSHA; false once the bound is reached (it still runs). */
  keepScript(sha: string, script: Buffer): boolean {
    if (this.scripts.has(sha)) return true;
    if (this.scripts.size >= MAX_SCRIPTS || script.length > MAX_SCRIPT_BYTES) return false;
    this.scripts.set(sha, script);
    return true;
  }
}

export class AddressStates {
  private readonly states = new Map<string, AddressState>();

  constructor(
    private readonly maxAddresses: number,
    private readonly limits: KeyspaceLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.states.size;
  }

  /** The state of an address for a new connection (created if new); pair with release(). */
  acquire(address: string): AddressState {
    let state = this.states.get(address);
    if (state) this.states.delete(address);
    else state = new AddressState(this.limits, this.now);
    // Re-inserted: the Map's order is the order of last use.
    this.states.set(address, state);
    state.connections++;
    this.evict();
    return state;
  }

  release(state: AddressState): void {
    state.connections--;
    this.evict();
  }

  /** Forgets the least recently used addresses with no open connection, down to the bound. */
  private evict(): void {
    if (this.states.size <= this.maxAddresses) return;
    for (const [address, state] of this.states) {
      if (this.states.size <= this.maxAddresses) return;
      if (state.connections === 0) this.states.delete(address);
    }
  }
}
