/**
 * Node authentication, on the existing protocol's TOTP fields.
 *
 * First registration of a node_id: it presents the enrollment token (config) and Core answers
 * with a fresh per-node secret in `RegistrationAck.totp_key`. From then on that node_id must
 * present a valid RFC 6238 code in `NodeRegistration.totp_code` (one step of drift allowed),
 * so the id cannot be taken over by a client that only knows the enrollment token. A code is
 * accepted once per channel (control, events): a replayed code is refused. Failed attempts
 * are rate-limited per source address.
 */
import { timingSafeEqual } from "node:crypto";
import type { RateLimiter } from "./rate-limit";
import { newTotpSecret, totpStep } from "./totp";

export type AuthChannel = "control" | "events";

/** Where per-node secrets and the last accepted step of each channel live (the database). */
export interface NodeSecretStore {
  get(nodeId: bigint): { secret: string; control_step: number; events_step: number } | null;
  create(nodeId: bigint, secret: string): void;
  setStep(nodeId: bigint, channel: AuthChannel, step: number): void;
}

export type NodeAuthResult = { ok: true; totp_key?: string } | { ok: false; message: string };

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

export class NodeAuth {
  failures = 0;

  constructor(
    private readonly enrollmentToken: string,
    private readonly store: NodeSecretStore,
    private readonly limiter: RateLimiter,
  ) {}

  get enabled(): boolean {
    return this.enrollmentToken !== "";
  }

  /** Checks a NodeRegistration's proof; enrolls a new node_id. */
  register(nodeId: bigint, proof: { totp_code?: string | null; enrollment_token?: string }, address: string, now = Date.now()): NodeAuthResult {
    if (!this.enabled) return { ok: true };
    if (this.limiter.blocked(address, now)) return { ok: false, message: `too many failed registrations from ${address}; retry later` };
    const known = this.store.get(nodeId);
    if (!known) {
      if (!proof.enrollment_token || !sameSecret(proof.enrollment_token, this.enrollmentToken)) {
        return this.fail(address, `node ${nodeId} is not enrolled: present the enrollment token (enrollment_token) on its first registration`);
      }
      const secret = newTotpSecret();
      this.store.create(nodeId, secret);
      return { ok: true, totp_key: secret };
    }
    return this.checkCode(nodeId, known, "control", proof.totp_code ?? null, address, now);
  }

  /** Checks an EventStreamHello's proof. */
  eventStream(nodeId: bigint | undefined, code: string | undefined, address: string, now = Date.now()): NodeAuthResult {
    if (!this.enabled) return { ok: true };
    if (this.limiter.blocked(address, now)) return { ok: false, message: `too many failed authentications from ${address}; retry later` };
    if (nodeId === undefined) return this.fail(address, "EventStreamHello needs node_id and totp_code on this Core");
    const known = this.store.get(nodeId);
    if (!known) return this.fail(address, `node ${nodeId} is not enrolled; register it on the control channel first`);
    return this.checkCode(nodeId, known, "events", code ?? null, address, now);
  }

  private checkCode(nodeId: bigint, known: { secret: string; control_step: number; events_step: number }, channel: AuthChannel, code: string | null, address: string, now: number): NodeAuthResult {
    if (!code) return this.fail(address, `node ${nodeId} is enrolled: present a TOTP code (totp_code)`);
    const step = totpStep(known.secret, code, now);
    if (step === null) return this.fail(address, `invalid or expired TOTP code for node ${nodeId}`);
    const last = channel === "control" ? known.control_step : known.events_step;
    if (step <= last) return this.fail(address, `TOTP code for node ${nodeId} was already used; wait for the next code`);
    this.store.setStep(nodeId, channel, step);
    return { ok: true };
  }

  private fail(address: string, message: string): NodeAuthResult {
    this.failures++;
    this.limiter.take(address);
    return { ok: false, message };
  }
}
