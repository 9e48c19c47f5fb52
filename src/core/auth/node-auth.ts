/**
 * Node authentication, on the existing protocol's TOTP fields.
 *
 * First registration of a node_id: it presents the enrollment token (config) and Core answers
 * with a fresh per-node secret in `RegistrationAck.totp_key`. From then on that node_id must
 * present a valid RFC 6238 code in `NodeRegistration.totp_code` (one step of drift allowed),
 * so the id cannot be taken over by a client that only knows the enrollment token. A code is
 * accepted once per channel (control, events): a replayed code is refused. Failed attempts
 * are rate-limited per source address.
 *
 * Every check reads the secret and the last accepted step from the store, and takes a step in
 * one conditional write: with several instances on one database, a node enrolled on one is
 * known to the others at once, and a step one of them accepted is a replay on every other. A
 * store that answers with promises (PostgreSQL) makes the check a promise; SQLite's answers
 * at once, and so does the check.
 */
import { timingSafeEqual } from "node:crypto";
import type { RateLimiter } from "./rate-limit";
import { newTotpSecret, totpStep } from "../../protocol/totp";
import type { AuthChannel, NodeSecret, NodeSecretStore } from "../../db/node-secret-store";

export type { AuthChannel, NodeSecret, NodeSecretStore };

type MaybePromise<T> = T | Promise<T>;

export type NodeAuthResult = { ok: true; totp_key?: string } | { ok: false; message: string };

const sameSecret = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Applies `f` at once to a value, or once a promise settles: SQLite's checks stay synchronous. */
const then = <T, U>(v: MaybePromise<T>, f: (t: T) => MaybePromise<U>): MaybePromise<U> => (v instanceof Promise ? v.then(f) : f(v));

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
  register(nodeId: bigint, proof: { totp_code?: string | null; enrollment_token?: string }, address: string, now = Date.now()): MaybePromise<NodeAuthResult> {
    if (!this.enabled) return { ok: true };
    if (this.limiter.blocked(address, now)) return { ok: false, message: `too many failed registrations from ${address}; retry later` };
    return this.guarded(nodeId, () =>
      then(this.store.get(nodeId), (known) => {
        if (known) return this.checkCode(nodeId, known, "control", proof.totp_code ?? null, address, now);
        if (!proof.enrollment_token || !sameSecret(proof.enrollment_token, this.enrollmentToken)) {
          return this.fail(address, `node ${nodeId} is not enrolled: present the enrollment token (enrollment_token) on its first registration`);
        }
        const secret = newTotpSecret();
        return then(this.store.create(nodeId, secret), (created): NodeAuthResult => (created ? { ok: true, totp_key: secret } : this.fail(address, `node ${nodeId} is enrolled: present a TOTP code (totp_code)`)));
      }),
    );
  }

  /** Checks an EventStreamHello's proof. */
  eventStream(nodeId: bigint | undefined, code: string | undefined, address: string, now = Date.now()): MaybePromise<NodeAuthResult> {
    if (!this.enabled) return { ok: true };
    if (this.limiter.blocked(address, now)) return { ok: false, message: `too many failed authentications from ${address}; retry later` };
    if (nodeId === undefined) return this.fail(address, "EventStreamHello needs node_id and totp_code on this Core");
    return this.guarded(nodeId, () =>
      then(this.store.get(nodeId), (known) => {
        if (!known) return this.fail(address, `node ${nodeId} is not enrolled; register it on the control channel first`);
        return this.checkCode(nodeId, known, "events", code ?? null, address, now);
      }),
    );
  }

  private checkCode(nodeId: bigint, known: NodeSecret, channel: AuthChannel, code: string | null, address: string, now: number): MaybePromise<NodeAuthResult> {
    if (!code) return this.fail(address, `node ${nodeId} is enrolled: present a TOTP code (totp_code)`);
    const step = totpStep(known.secret, code, now);
    if (step === null) return this.fail(address, `invalid or expired TOTP code for node ${nodeId}`);
    const replay = () => this.fail(address, `TOTP code for node ${nodeId} was already used; wait for the next code`);
    if (step <= (channel === "control" ? known.control_step : known.events_step)) return replay();
    // Another instance may have taken this step since the read: the write decides.
    return then(this.store.claimStep(nodeId, channel, step), (claimed): NodeAuthResult => (claimed ? { ok: true } : replay()));
  }

  /**
   * A store that fails (the database away) refuses the node for now without counting against
   * its address: the node did nothing wrong, and tries again.
   */
  private guarded(nodeId: bigint, check: () => MaybePromise<NodeAuthResult>): MaybePromise<NodeAuthResult> {
    const unavailable = (e: unknown): NodeAuthResult => ({ ok: false, message: `cannot check node ${nodeId}'s credentials now (${(e as Error).message}); retry later` });
    try {
      const r = check();
      return r instanceof Promise ? r.catch(unavailable) : r;
    } catch (e) {
      return unavailable(e);
    }
  }

  private fail(address: string, message: string): NodeAuthResult {
    this.failures++;
    this.limiter.take(address);
    return { ok: false, message };
  }
}
