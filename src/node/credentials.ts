/**
 * The node's proof of identity towards Core: the enrollment token on its very first
 * registration, then TOTP codes from the secret Core handed back (RegistrationAck.totp_key),
 * kept in `DATA/totp_key` readable by the node's user only.
 *
 * Core accepts each time step once per channel (a replayed code is refused) and one step of
 * drift. So that a node reconnecting twice within 30 s is not locked out until the next step,
 * it uses the following step's code when the current one is spent; the last step used per
 * channel is kept in `DATA/totp_state` so a restarted node does not reuse one either.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TOTP_PERIOD_S, totpCode } from "../core/auth/totp";

type Channel = "control" | "events";

export class NodeCredentials {
  private readonly keyFile: string;
  private readonly stateFile: string;
  private secret: string | null;
  private used: Record<Channel, number> = { control: 0, events: 0 };

  constructor(
    dataDir: string,
    private readonly enrollmentToken: string,
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

  /** Keeps the secret Core sent with an accepted registration. */
  accept(totpKey: string | undefined): void {
    if (!totpKey || totpKey === this.secret) return;
    writePrivate(this.keyFile, totpKey + "\n");
    this.secret = totpKey;
    this.used = { control: 0, events: 0 };
    writePrivate(this.stateFile, JSON.stringify(this.used));
  }

  private code(channel: Channel): string {
    const now = Math.floor(Date.now() / 1000 / TOTP_PERIOD_S);
    const step = Math.max(now, this.used[channel] + 1);
    this.used[channel] = step;
    writePrivate(this.stateFile, JSON.stringify(this.used));
    return totpCode(this.secret!, step * TOTP_PERIOD_S * 1000);
  }
}

/** Created 0600 before anything is written, then renamed into place: never readable by others. */
function writePrivate(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
