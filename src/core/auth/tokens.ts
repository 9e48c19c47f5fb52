/**
 * Operator authentication: API tokens with a role, kept only as SHA-256 hashes.
 *
 * A token is a random secret shown once when it is made (`honeybee token create`); Core keeps
 * its hash, so a leaked config file does not leak a usable token. Tokens are long random
 * strings, so a plain hash (no salt, no stretching) is enough: nothing to guess from.
 */
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError, type CoreConfig, type TokenEntry } from "../../config";

export type Role = "read" | "operator";

/** Who is asking: established once per request or connection, carried into command records. */
export interface Principal {
  name: string;
  role: Role;
}

/** The principal of every request when authentication is off (SPEC.md's interface). */
export const ANONYMOUS: Principal = { name: "anonymous", role: "operator" };

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function newToken(): string {
  return "hb_" + randomBytes(24).toString("base64url");
}

export class TokenSet {
  private byHash = new Map<string, Principal>();

  constructor(entries: TokenEntry[]) {
    for (const e of entries) this.byHash.set(e.sha256, { name: e.name, role: e.role });
  }

  static fromConfig(config: CoreConfig): TokenSet {
    const entries = [...config.tokens];
    if (config.tokens_file) {
      try {
        const parsed = JSON.parse(readFileSync(config.tokens_file, "utf8")) as { tokens?: TokenEntry[] };
        entries.push(...(parsed.tokens ?? []));
      } catch (e) {
        throw new ConfigError(`tokens_file ${config.tokens_file} cannot be read: ${(e as Error).message}`);
      }
    }
    for (const e of entries) {
      if (!/^[0-9a-f]{64}$/.test(e.sha256 ?? "") || (e.role !== "read" && e.role !== "operator") || !e.name) {
        throw new ConfigError(`invalid token entry ${JSON.stringify({ name: e.name, role: e.role })}: needs name, role read|operator and sha256 (64 hex digits)`);
      }
    }
    return new TokenSet(entries);
  }

  get enabled(): boolean {
    return this.byHash.size > 0;
  }

  authenticate(token: string): Principal | null {
    return this.byHash.get(sha256(token)) ?? null;
  }
}

/**
 * Finds a presented token: `Authorization: Bearer`, or for browsers (which cannot set headers
 * on a WebSocket) `Sec-WebSocket-Protocol: bearer, <token>` or a `token` query parameter
 * (WebSocket upgrades only: `queryAllowed`).
 */
export function presentedToken(req: Request, url: URL, queryAllowed = true): { token: string | null; via: "header" | "protocol" | "query" | null } {
  const auth = req.headers.get("authorization");
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth.trim());
    return { token: m ? m[1]! : "", via: "header" };
  }
  const protocols = req.headers.get("sec-websocket-protocol");
  if (protocols) {
    const parts = protocols.split(",").map((p) => p.trim());
    const i = parts.indexOf("bearer");
    if (i >= 0 && parts[i + 1]) return { token: parts[i + 1]!, via: "protocol" };
  }
  const q = queryAllowed ? url.searchParams.get("token") : null;
  if (q) return { token: q, via: "query" };
  return { token: null, via: null };
}

export function hasRole(p: Principal, needed: Role): boolean {
  return needed === "read" || p.role === "operator";
}
