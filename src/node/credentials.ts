/**
 * The node's proof of identity towards Core: the enrollment token on its very first
 * registration, then TOTP codes from the secret Core handed back (RegistrationAck.totp_key),
 * kept in `DATA/totp_key` readable by the node's user only.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { totpCode } from "../core/auth/totp";

export class NodeCredentials {
  private readonly file: string;
  private secret: string | null;

  constructor(
    dataDir: string,
    private readonly enrollmentToken: string,
  ) {
    this.file = join(dataDir, "totp_key");
    this.secret = existsSync(this.file) ? readFileSync(this.file, "utf8").trim() || null : null;
  }

  get enrolled(): boolean {
    return this.secret !== null;
  }

  /** Extra NodeRegistration fields: a code once enrolled, else the enrollment token (if any). */
  registration(): { totp_code?: string; enrollment_token?: string } {
    if (this.secret) return { totp_code: totpCode(this.secret) };
    return this.enrollmentToken ? { enrollment_token: this.enrollmentToken } : {};
  }

  /** Extra EventStreamHello fields. */
  hello(): { totp_code?: string } {
    return this.secret ? { totp_code: totpCode(this.secret) } : {};
  }

  /** Keeps the secret Core sent with an accepted registration. */
  accept(totpKey: string | undefined): void {
    if (!totpKey || totpKey === this.secret) return;
    // Created 0600 before the secret is written, then renamed into place: never readable by others.
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, totpKey + "\n", { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, this.file);
    this.secret = totpKey;
  }
}
