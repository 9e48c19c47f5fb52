/**
 * Watching one node command until its honeypot reaches a state: pure logic over live-feed
 * messages, so every path (success, Failed, a refused command, a node that drops) is tested
 * without a network.
 *
 * Nodes report in two ways: PotStatusUpdate as the pot moves (Installing, Stopped, Running,
 * Failed) and, for our own nodes, a CommandResult that closes the command. Other nodes may send
 * only the first, so reaching the target state is success on its own. A CommandResult that is
 * ok but arrives without a fresh status (starting a pot that already runs) is settled by asking
 * the registry once.
 *
 * An install must be seen to start (`via: "Installing"`) before a status counts: a node that
 * refuses an InstallPot for a pot id already in use first reports that pot's current status,
 * which may well be the target.
 */
import type { FeedMessage } from "./feed";

export interface WatchSpec {
  commandId: string;
  nodeId: bigint;
  potId: string;
  /** State that ends the wait; null: any fresh status answers (GetPotStatus). */
  target: string | null;
  /** A status that must be seen before others count; until then the CommandResult decides. */
  via?: string;
}

export type Verdict =
  | { done: true; ok: true; status: string | null; potType: string | null; message: string | null }
  | { done: true; ok: false; status: string | null; potType: string | null; message: string }
  | { done: false; progress?: string; askRegistry?: boolean };

/** States a node reports that say the node is gone, not the pot. */
const NODE_GONE = new Set(["Unknown", "Stopped"]);

export class CommandWatch {
  status: string | null = null;
  potType: string | null = null;
  private resultOk = false;
  private message: string | null = null;
  private armed: boolean;

  constructor(private readonly spec: WatchSpec) {
    this.armed = spec.via === undefined;
  }

  private success(status: string | null): Verdict {
    return { done: true, ok: true, status, potType: this.potType, message: this.message };
  }

  private failure(message: string): Verdict {
    return { done: true, ok: false, status: this.status, potType: this.potType, message };
  }

  onMessage(m: FeedMessage): Verdict {
    const p = m.payload ?? {};
    const mine = p.node_id === this.spec.nodeId;
    if (m.kind === "PotStatusUpdate" && mine && p.pot_id === this.spec.potId) {
      this.status = String(p.status);
      this.potType = typeof p.pot_type === "string" ? p.pot_type : this.potType;
      if (typeof p.message === "string" && p.message) this.message = p.message;
      if (this.status === this.spec.via) this.armed = true;
      if (!this.armed) return { done: false };
      if (this.status === "Failed") return this.failure(this.message ?? "the node reported Failed without a reason; see the node's log");
      if (this.spec.target === null || this.status === this.spec.target) return this.success(this.status);
      return { done: false, progress: `${this.spec.potId}: ${this.status}${typeof p.message === "string" && p.message ? ` (${p.message})` : ""}` };
    }
    if (m.kind === "CommandResult" && p.command_id === this.spec.commandId) {
      if (typeof p.message === "string" && p.message) this.message = p.message;
      if (!p.ok) return this.failure(this.message ?? "the node refused the command without a reason; see the node's log");
      this.resultOk = true;
      this.armed = true;
      if (this.spec.target === null && this.status !== null) return this.success(this.status);
      return { done: false, askRegistry: true };
    }
    if (mine && (m.kind === "NodeDrop" || (m.kind === "NodeStatusUpdate" && NODE_GONE.has(String(p.status))))) {
      return this.failure(`the node disconnected (${m.kind === "NodeDrop" ? "it said goodbye" : `status ${p.status}`}) before the honeypot reached ${this.spec.target ?? "a state"}`);
    }
    return { done: false };
  }

  /** The registry's status of the pot, asked after an ok CommandResult. */
  onRegistry(status: string | null, potType: string | null): Verdict {
    if (!this.resultOk) return { done: false };
    this.potType ??= potType;
    if (this.spec.target === null) return this.success(this.status ?? status);
    if (status === this.spec.target) {
      this.status = status;
      return this.success(status);
    }
    return { done: false };
  }
}
