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
    // A key file that does not parse (see generateKey) is replaced, or the pot could never start.
    if (!existsSync(file) || utils.parseKey(readFileSync(file, "utf8")) instanceof Error) {
      const pair = generateKey(type, opts);
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

/**
 * A key pair that ssh2 can read back. Under Bun, about one Ed25519 key in 256 comes out with
 * its public half a byte short (a leading zero dropped), and ssh2 then refuses the private key
 * as malformed: such a pair is generated again.
 */
function generateKey(type: (typeof KEY_TYPES)[number]["type"], opts: { bits: number } | undefined) {
  for (let attempt = 1; ; attempt++) {
    const pair = opts ? utils.generateKeyPairSync(type as "rsa" | "ecdsa", opts) : utils.generateKeyPairSync(type as "ed25519");
    if (!(utils.parseKey(pair.private) instanceof Error) || attempt >= 20) return pair;
  }
}
