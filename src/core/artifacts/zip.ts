/**
 * An artifact as a download: a zip encrypted with the password `infected`, the convention that
 * keeps virus scanners, mail filters and browsers from acting on live malware (docs/artifacts.md).
 * Written by @zip.js/zip.js. ZipCrypto by default, which every unzip tool reads (Debian's
 * `unzip` has no AES): the password is a label against accidents, not a secret. AES-256
 * (WinZip AE-2, 7-Zip reads it) on request.
 */
import { BlobWriter, ZipWriter, configure } from "@zip.js/zip.js";

// No web workers: Core zips in its own thread, one small file at a time.
configure({ useWebWorkers: false });

export const ZIP_PASSWORD = "infected";

/** `bytes` is read as the zip is written: the artifact is never whole in memory, only its zip. */
export async function encryptedZip(name: string, bytes: ReadableStream<Uint8Array>, encryption: "zipcrypto" | "aes"): Promise<Blob> {
  const writer = new ZipWriter(new BlobWriter("application/zip"), { password: ZIP_PASSWORD, ...(encryption === "zipcrypto" ? { zipCrypto: true } : { encryptionStrength: 3 as const }) });
  await writer.add(name, bytes, { level: 6 });
  return writer.close();
}
