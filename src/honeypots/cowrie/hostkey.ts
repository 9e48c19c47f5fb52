/**
 * The SSH host keys: generated once per pot (at install, or at the first start if missing) and
 * kept in the pot's folder, so the fingerprint stays the same across restarts, as a real server's
 * does, and differs between pots, so two honeypots never share an identity. RSA, ECDSA and Ed25519,
 * the three an OpenSSH server on Debian offers; old bots that only speak ssh-rsa can still connect.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { utils } from "ssh2";

const KEY_TYPES = [
  { type: "rsa", opts: { bits: 3072 } },
  { type: "ecdsa", opts: { bits: 256 } },
  { type: "ed25519", opts: undefined },
] as const;

export interface HostKeys {
  privateKeys: string[];
  created: string[];
}

export function ensureHostKeys(dir: string): HostKeys {
  const privateKeys: string[] = [];
  const created: string[] = [];
  for (const { type, opts } of KEY_TYPES) {
    const file = join(dir, `ssh_host_${type}_key`);
    if (!existsSync(file)) {
      const pair = opts ? utils.generateKeyPairSync(type, opts) : utils.generateKeyPairSync(type);
      // Written aside and renamed, so a start racing the install step never reads half a key.
      const partial = `${file}.${process.pid}.tmp`;
      writeFileSync(partial, pair.private, { mode: 0o600 });
      renameSync(partial, file);
      writeFileSync(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 });
      created.push(file);
    }
    privateKeys.push(readFileSync(file, "utf8"));
  }
  return { privateKeys, created };
}
