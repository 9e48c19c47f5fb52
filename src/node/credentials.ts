/**
 * The node's proof of identity towards Core: the enrollment token on its very first
 * registration, then TOTP codes from the secret Core handed back (RegistrationAck.totp_key),
 * kept in `DATA/totp_key` readable by the node's user only.
 *
 * Core accepts each time step once per channel (a replayed code is refused, on every instance
 * of a cluster) and one step of drift. So that a node reconnecting twice within 30 s is not
 * locked out until the next step, it uses the following step's code when the current one is
 * spent. A step is spent once Core accepted it, or may have: an attempt that got no answer
 * (Core died before answering) counts, one that Core refused does not. The last step spent per
 * channel is kept in `DATA/totp_state`, so a restarted node does not reuse one either.
 *
 * A code is never further ahead than the drift Core allows (the clock's step + 1): when that
 * one is spent too, the node waits for the next step (`readyIn`) rather than send a code Core
 * must refuse. Spending a step on each refused attempt, as this node once did, ran it minutes
 * ahead of the clock after a fail-over, and every Core refused it until the clock caught up.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TOTP_PERIOD_S, totpCode } from "../protocol/totp";

export type Channel = "control" | "events";

const PERIOD_MS = TOTP_PERIOD_S * 1000;

export class NodeCredentials {
  private readonly keyFile: string;
  private readonly stateFile: string;
  private secret: string | null;
  private used: Record<Channel, number> = { control: 0, events: 0 };
  /** Core accepted a registration without handing a secret: it does not authenticate nodes. */
  private notAsked = false;
  /** The attempt awaiting Core's answer per channel, and what was spent before it. */
  private trying: Record<Channel, { step: number; before: number } | null> = { control: null, events: null };

  constructor(
    dataDir: string,
    private readonly enrollmentToken: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.keyFile = join(dataDir, "totp_key");
    this.stateFile = join(dataDir, "totp_state");
    this.secret = existsSync(this.keyFile) ? readFileSync(this.keyFile, "utf8").trim() || null : null;
    try {
      this.used = { ...this.used, ...JSON.parse(readFileSync(this.stateFile, "utf8")) };
    } catch {}
  }

  get enrolled(): boolean {
    return this.secret !== null;
  }

  /** Extra NodeRegistration fields: a code once enrolled, else the enrollment token (if any). */
  registration(): { totp_code?: string; enrollment_token?: string } {
    if (this.secret) return { totp_code: this.code("control") };
    return this.enrollmentToken ? { enrollment_token: this.enrollmentToken } : {};
  }

  /** Extra EventStreamHello fields. */
  hello(): { totp_code?: string } {
    return this.secret ? { totp_code: this.code("events") } : {};
  }

  /**
   * Milliseconds until a channel has a code Core can accept (0: now). An event stream opened
   * while the node is enrolling would be refused: it waits for the registration, which opens
   * it at once (the forwarder follows the control link), or a step at most.
   */
  readyIn(channel: Channel): number {
    if (!this.secret) return channel === "events" && this.enrollmentToken !== "" && !this.notAsked ? PERIOD_MS : 0;
    const now = this.clock();
    const step = Math.floor(now / PERIOD_MS);
    return this.spent(channel, step) > step ? (step + 1) * PERIOD_MS - now : 0;
  }

  /** Core accepted the registration; keeps the secret it sent with it, if any. */
  accept(totpKey: string | undefined): void {
    this.trying.control = null;
    if (!totpKey && !this.secret) this.notAsked = true;
    if (!totpKey || totpKey === this.secret) return;
    writePrivate(this.keyFile, totpKey + "\n");
    this.secret = totpKey;
    this.used = { control: 0, events: 0 };
    writePrivate(this.stateFile, JSON.stringify(this.used));
  }

  /** Core refused the attempt in flight on `channel`: its step was not spent. */
  refused(channel: Channel): void {
    const t = this.trying[channel];
    this.trying[channel] = null;
    if (!t || this.used[channel] !== t.step) return;
    this.used[channel] = t.before;
    writePrivate(this.stateFile, JSON.stringify(this.used));
  }

  /**
   * The last step spent, as far as Core can have accepted it: never past the clock's step + 1
   * (a state file from a node that ran ahead is brought back).
   */
  private spent(channel: Channel, step: number): number {
    return Math.min(this.used[channel], step + 1);
  }

  private code(channel: Channel): string {
    const now = Math.floor(this.clock() / PERIOD_MS);
    const before = this.spent(channel, now);
    const step = Math.min(Math.max(now, before + 1), now + 1);
    // Spent until Core says otherwise: an answer may never come.
    this.trying[channel] = { step, before };
    this.used[channel] = Math.max(before, step);
    writePrivate(this.stateFile, JSON.stringify(this.used));
    return totpCode(this.secret!, step * PERIOD_MS);
  }
}

/** Created 0600 before anything is written, then renamed into place: never readable by others. */
function writePrivate(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
