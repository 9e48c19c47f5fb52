/**
 * RFC 6238 time-based one-time codes (30 s steps, 6 digits, SHA-1: what authenticator apps
 * and the existing protocol's `totp_code` expect), through the otpauth library.
 */
import { Secret, TOTP } from "otpauth";

export const TOTP_PERIOD_S = 30;

const totp = (base32: string) => new TOTP({ secret: Secret.fromBase32(base32), digits: 6, period: TOTP_PERIOD_S, algorithm: "SHA1" });

export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

export function totpCode(base32: string, now = Date.now()): string {
  return totp(base32).generate({ timestamp: now });
}

/**
 * The time step a code belongs to, allowing one step of clock drift either way; null when it
 * matches none. Callers refuse a step they have already accepted (a replayed code).
 */
export function totpStep(base32: string, code: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp(base32).validate({ token: code, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / TOTP_PERIOD_S) + delta;
}
