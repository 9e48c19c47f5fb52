/**
 * The pot's TLS certificate: a self-signed one shaped like Debian's "snakeoil" certificate that
 * the ssl-cert package makes at install (`make-ssl-cert`: RSA 2048, CN and subjectAltName the
 * host name, ten years, a random 20-byte serial, SHA-256), since that is what an Apache or
 * nginx on Debian presents until someone installs a real one. Generated once per pot and kept in
 * the pot's folder, so its fingerprint stays the same across restarts and differs between pots.
 *
 * Node and Bun can make keys but not certificates; the DER below is the few structures of
 * RFC 5280 such a certificate needs, checked by parsing it back with X509Certificate.
 */
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const CERT_FILE = "ssl-cert-snakeoil.pem";
export const KEY_FILE = "ssl-cert-snakeoil.key";
const VALID_DAYS = 3650;

function der(tag: number, ...parts: Uint8Array[]): Buffer {
  const content = Buffer.concat(parts);
  const n = content.length;
  let length: Buffer;
  if (n < 0x80) length = Buffer.from([n]);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
    length = Buffer.from([0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([Buffer.from([tag]), length, content]);
}

const sequence = (...parts: Uint8Array[]) => der(0x30, ...parts);
const NULL = Buffer.from([0x05, 0x00]);

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number) as [number, number, ...number[]];
  const bytes = [a * 40 + b];
  for (const n of rest) {
    const groups: number[] = [];
    for (let v = n; ; v = Math.floor(v / 128)) {
      groups.unshift((v % 128) | (groups.length ? 0x80 : 0));
      if (v < 128) break;
    }
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime up to 2049, GeneralizedTime after, as RFC 5280 4.1.2.5 requires. */
function time(date: Date): Buffer {
  const iso = date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return date.getUTCFullYear() < 2050 ? der(0x17, Buffer.from(`${iso.slice(2)}Z`)) : der(0x18, Buffer.from(`${iso}Z`));
}

const SHA256_WITH_RSA = sequence(oid("1.2.840.113549.1.1.11"), NULL);
const name = (cn: string) => sequence(der(0x31, sequence(oid("2.5.4.3"), der(0x0c, Buffer.from(cn, "utf8")))));

export interface Certificate {
  cert: string;
  key: string;
}

export function makeCertificate(hostname: string, now = new Date()): Certificate {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const serial = randomBytes(20);
  serial[0] = (serial[0]! & 0x7f) | 0x01; // positive and 20 bytes long, as OpenSSL makes them
  const spki = publicKey.export({ type: "spki", format: "der" });
  // RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits, which for RSA is the PKCS#1 key.
  const keyId = createHash("sha1").update(publicKey.export({ type: "pkcs1", format: "der" })).digest();
  const notAfter = new Date(now.getTime() + VALID_DAYS * 86_400_000);
  const extensions = der(
    0xa3,
    sequence(
      sequence(oid("2.5.29.17"), der(0x04, sequence(der(0x82, Buffer.from(hostname, "latin1"))))),
      sequence(oid("2.5.29.14"), der(0x04, der(0x04, keyId))),
    ),
  );
  const tbs = sequence(der(0xa0, der(0x02, Buffer.from([2]))), der(0x02, serial), SHA256_WITH_RSA, name(hostname), sequence(time(now), time(notAfter)), name(hostname), spki, extensions);
  const signature = sign("sha256", tbs, privateKey);
  const cert = sequence(tbs, SHA256_WITH_RSA, der(0x03, Buffer.from([0]), signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${cert.toString("base64").replace(/.{64}/g, "$&\n").replace(/\n?$/, "\n")}-----END CERTIFICATE-----\n`;
  return { cert: pem, key: privateKey.export({ type: "pkcs8", format: "pem" }) as string };
}

/** The certificate and key in `dir` if they parse, match each other and name `hostname`. */
function existing(dir: string, hostname: string): Certificate | null {
  const certFile = join(dir, CERT_FILE);
  const keyFile = join(dir, KEY_FILE);
  if (!existsSync(certFile) || !existsSync(keyFile)) return null;
  try {
    const cert = readFileSync(certFile, "utf8");
    const key = readFileSync(keyFile, "utf8");
    const x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key)) || x509.subject !== `CN=${hostname}`) return null;
    return { cert, key };
  } catch {
    return null;
  }
}

/** Loads the pot's certificate, making it first when missing, damaged or for another host name. */
export function ensureCertificate(dir: string, hostname: string): Certificate & { created: boolean } {
  const found = existing(dir, hostname);
  if (found) return { ...found, created: false };
  const made = makeCertificate(hostname);
  // Written aside and renamed, so a start racing the install step never reads half a file.
  for (const [file, text, mode] of [
    [KEY_FILE, made.key, 0o600],
    [CERT_FILE, made.cert, 0o644],
  ] as const) {
    const partial = join(dir, `${file}.${process.pid}.tmp`);
    writeFileSync(partial, text, { mode });
    renameSync(partial, join(dir, file));
  }
  return { ...made, created: true };
}
