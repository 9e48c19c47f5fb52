/**
 * How a MySQL server checks a password it never sees: the client answers a random scramble with
 * a hash of its password, and the server, holding only a hash of each account's password, checks
 * the answer. This honeypot holds the candidate passwords instead (the `credentials` rules and the
 * `password_guesses` list), so a matching answer names the password the client typed. Through
 * caching_sha2_password's "full authentication" a client without TLS sends its password
 * RSA-encrypted to the server's key: that one decrypts to the password itself, whatever it is.
 */
import { constants, createHash, generateKeyPairSync, type KeyObject, privateDecrypt } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allows, parseUserDb, type Rule } from "../cowrie/userdb.ts";

export const NATIVE = "mysql_native_password";
export const CACHING_SHA2 = "caching_sha2_password";
export const CLEAR = "mysql_clear_password";

/** caching_sha2_password's one-byte messages after the fast step (AuthMoreData payloads). */
export const FAST_AUTH_SUCCESS = 0x03;
export const PERFORM_FULL_AUTHENTICATION = 0x04;
export const REQUEST_PUBLIC_KEY = 0x02;

export const SCRAMBLE_BYTES = 20;

const sha1 = (...parts: Uint8Array[]) => parts.reduce((h, p) => h.update(p), createHash("sha1")).digest();
const sha256 = (...parts: Uint8Array[]) => parts.reduce((h, p) => h.update(p), createHash("sha256")).digest();

function xor(a: Uint8Array, b: Uint8Array): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i % b.length]!;
  return out;
}

/**
 * 20 random bytes in 1-127 without `$`, as mysqld's generate_user_salt makes them: old clients
 * read the scramble's second half up to a NUL, and `$` separates fields of a stored hash.
 */
export function newScramble(random: (n: number) => Uint8Array = (n) => crypto.getRandomValues(new Uint8Array(n))): Buffer {
  const out = Buffer.from(random(SCRAMBLE_BYTES));
  for (let i = 0; i < out.length; i++) {
    let b = out[i]! & 0x7f;
    if (b === 0 || b === 0x24) b++;
    out[i] = b;
  }
  return out;
}

/** mysql_native_password's answer: SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))). */
export function nativeResponse(password: string, scramble: Uint8Array): Buffer {
  if (password === "") return Buffer.alloc(0);
  const stage1 = sha1(Buffer.from(password, "utf8"));
  return xor(stage1, sha1(scramble, sha1(stage1)));
}

/** caching_sha2_password's fast answer: SHA256(password) XOR SHA256(SHA256(SHA256(password)) + scramble). */
export function sha2Response(password: string, scramble: Uint8Array): Buffer {
  if (password === "") return Buffer.alloc(0);
  const stage1 = sha256(Buffer.from(password, "utf8"));
  return xor(stage1, sha256(sha256(stage1), scramble));
}

/** What the client sends RSA-encrypted in full authentication: password + NUL, XORed with the scramble. */
export function xorPassword(password: string, scramble: Uint8Array): Buffer {
  return xor(Buffer.concat([Buffer.from(password, "utf8"), Buffer.from([0])]), scramble);
}

/** A password the answer was computed from, with hashes ready so each check costs one digest. */
class Candidate {
  private readonly sha1: Buffer;
  private readonly sha1sha1: Buffer;
  private readonly sha256: Buffer;
  private readonly sha256sha256: Buffer;

  constructor(readonly password: string) {
    this.sha1 = sha1(Buffer.from(password, "utf8"));
    this.sha1sha1 = sha1(this.sha1);
    this.sha256 = sha256(Buffer.from(password, "utf8"));
    this.sha256sha256 = sha256(this.sha256);
  }

  matches(plugin: string, scramble: Uint8Array, response: Uint8Array): boolean {
    if (this.password === "") return response.length === 0;
    if (plugin === NATIVE) return response.length === 20 && xor(this.sha1, sha1(scramble, this.sha1sha1)).equals(response);
    if (plugin === CACHING_SHA2) return response.length === 32 && xor(this.sha256, sha256(this.sha256sha256, scramble)).equals(response);
    return false;
  }
}

/** How a login's password is known, if it is. */
export type PasswordSource = "candidate" | "empty" | "rsa" | "cleartext";

/** One client's answer, as far as the server has it: hashed against a scramble, or in the clear. */
export type Proof = { plugin: string; scramble: Uint8Array; response: Uint8Array } | { cleartext: string };

export class Accounts {
  private readonly rules: Rule[];
  private readonly candidates = new Map<string, Candidate>();
  private readonly guesses: Candidate[];

  constructor(credentials: string, guesses: string[]) {
    this.rules = parseUserDb(credentials);
    for (const rule of this.rules) {
      if (rule.password !== "*" && !this.candidates.has(rule.password)) this.candidates.set(rule.password, new Candidate(rule.password));
    }
    this.guesses = guesses.map((g) => this.candidates.get(g) ?? new Candidate(g));
  }

  private check(password: string, proof: Proof): boolean {
    if ("cleartext" in proof) return proof.cleartext === password;
    return (this.candidates.get(password) ?? new Candidate(password)).matches(proof.plugin, proof.scramble, proof.response);
  }

  /** Whether the rules let `user` in with this proof: Cowrie's userdb, first matching rule wins. */
  allows(user: string, proof: Proof): boolean {
    if ("cleartext" in proof) return allows(this.rules, user, proof.cleartext);
    for (const rule of this.rules) {
      if (rule.user !== "*" && rule.user !== user) continue;
      if (rule.password !== "*" && !this.check(rule.password, proof)) continue;
      return !rule.refuse;
    }
    return false;
  }

  /** The password the proof was made from: the cleartext, or the first candidate that matches. */
  recover(user: string, proof: Proof): { password: string | null; source: PasswordSource | null } {
    if ("cleartext" in proof) return { password: proof.cleartext, source: "cleartext" };
    if (proof.response.length === 0) return { password: "", source: "empty" };
    const tried = new Set<Candidate>();
    for (const rule of this.rules) {
      if ((rule.user !== "*" && rule.user !== user) || rule.password === "*") continue;
      const c = this.candidates.get(rule.password)!;
      tried.add(c);
      if (c.matches(proof.plugin, proof.scramble, proof.response)) return { password: c.password, source: "candidate" };
    }
    for (const c of this.guesses) {
      if (!tried.has(c) && c.matches(proof.plugin, proof.scramble, proof.response)) return { password: c.password, source: "candidate" };
    }
    return { password: null, source: null };
  }
}

export interface RsaKeys {
  publicPem: string;
  privatePem: string;
}

/**
 * The server's RSA key pair for full authentication, kept in the pot's folder under mysqld's own
 * file names (it writes them to its data directory), so the key stays the same across restarts
 * like a real server's and differs between pots.
 */
export function ensureRsaKeys(dir: string): RsaKeys {
  const privateFile = join(dir, "private_key.pem");
  const publicFile = join(dir, "public_key.pem");
  if (existsSync(privateFile) && existsSync(publicFile)) {
    return { privatePem: readFileSync(privateFile, "utf8"), publicPem: readFileSync(publicFile, "utf8") };
  }
  const { privateKey, publicKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  // Written aside and renamed, so a second start never reads half a key.
  for (const [file, pem, mode] of [[privateFile, privateKey, 0o600], [publicFile, publicKey, 0o644]] as const) {
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, pem, { mode });
    renameSync(partial, file);
  }
  return { privatePem: privateKey, publicPem: publicKey };
}

/** The password in a full-authentication packet, or null when it does not decrypt (OAEP, SHA-1, as clients pad). */
export function decryptPassword(privateKey: KeyObject | string, encrypted: Uint8Array, scramble: Uint8Array): string | null {
  let plain: Buffer;
  try {
    plain = privateDecrypt({ key: privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: "sha1" }, encrypted);
  } catch {
    return null;
  }
  return cleartext(xor(plain, scramble));
}

/** A password sent in the clear ends with a NUL; bytes after it are not part of it. */
export function cleartext(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes);
  const nul = buf.indexOf(0);
  return new TextDecoder("utf-8", { fatal: false }).decode(nul === -1 ? buf : buf.subarray(0, nul));
}
