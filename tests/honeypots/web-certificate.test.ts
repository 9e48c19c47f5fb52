import { describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CERT_FILE, ensureCertificate, KEY_FILE, makeCertificate } from "../../src/honeypots/web/certificate";
import { removeDir, run } from "./harness";

describe("the snakeoil certificate", () => {
  test("is shaped like Debian's make-ssl-cert makes it, and OpenSSL reads and verifies it", async () => {
    const now = new Date("2026-03-01T12:00:00Z");
    const { cert } = makeCertificate("www", now);
    const x509 = new X509Certificate(cert);
    expect({ subject: x509.subject, issuer: x509.issuer, san: x509.subjectAltName, from: x509.validFrom, to: x509.validTo, serialBytes: x509.serialNumber.length / 2 }).toEqual({
      subject: "CN=www",
      issuer: "CN=www",
      san: "DNS:www",
      from: "Mar  1 12:00:00 2026 GMT",
      to: "Feb 27 12:00:00 2036 GMT",
      serialBytes: 20,
    });
    expect(x509.verify(x509.publicKey)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "honeybee-web-cert-"));
    try {
      writeFileSync(join(dir, "c.pem"), cert);
      const text = await run(["openssl", "x509", "-in", join(dir, "c.pem"), "-noout", "-text"]);
      expect(text.stdout).toContain("Signature Algorithm: sha256WithRSAEncryption");
      expect(text.stdout).toContain("Public-Key: (2048 bit)");
      expect(text.stdout).toContain("X509v3 Subject Key Identifier");
      expect((await run(["openssl", "verify", "-CAfile", join(dir, "c.pem"), join(dir, "c.pem")])).stdout).toContain(": OK");
    } finally {
      removeDir(dir);
    }
  });

  test("is made once per pot, kept across starts, and made again when damaged or for another host name", () => {
    const dir = mkdtempSync(join(tmpdir(), "honeybee-web-cert-"));
    try {
      const first = ensureCertificate(dir, "debian");
      expect(first.created).toBe(true);
      expect(statSync(join(dir, KEY_FILE)).mode & 0o777).toBe(0o600);
      const again = ensureCertificate(dir, "debian");
      expect({ created: again.created, same: again.cert === first.cert }).toEqual({ created: false, same: true });
      const renamed = ensureCertificate(dir, "web-01");
      expect(renamed.created).toBe(true);
      expect(new X509Certificate(readFileSync(join(dir, CERT_FILE))).subject).toBe("CN=web-01");
      writeFileSync(join(dir, KEY_FILE), "not a key");
      expect(ensureCertificate(dir, "web-01").created).toBe(true);
    } finally {
      removeDir(dir);
    }
  });
});
