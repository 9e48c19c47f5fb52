/**
 * An artifact as a download: a zip encrypted with the password `infected`, the convention that
 * keeps virus scanners, mail filters and browsers from acting on live malware (docs/artifacts.md).
 * Written by @zip.js/zip.js. ZipCrypto by default, which every unzip tool reads (Debian's
 * `unzip` has no AES): the password is a label against accidents, not a secret. AES-256
 * (WinZip AE-2, 7-Zip reads it) on request.
 */
import { ZipWriter, configure } from "@zip.js/zip.js";

// No web workers: Core zips in its own thread, one small file at a time.
configure({ useWebWorkers: false });

export const ZIP_PASSWORD = "infected";

/**
 * The zip as it is written, which is as the client reads it: `bytes` is read as far as the
 * client has taken, so neither the artifact nor its zip is ever whole in memory. A failure
 * part way (the storage gone) errors the stream, and the client gets a cut zip no tool opens.
 */
export function encryptedZip(name: string, bytes: ReadableStream<Uint8Array>, encryption: "zipcrypto" | "aes"): ReadableStream<Uint8Array> {
  let fail: (e: unknown) => void = () => {};
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>({ start: (c) => void (fail = (e) => c.error(e)) });
  const writer = new ZipWriter(writable, { password: ZIP_PASSWORD, ...(encryption === "zipcrypto" ? { zipCrypto: true } : { encryptionStrength: 3 as const }) });
  writer
    .add(name, bytes, { level: 6 })
    .then(() => writer.close())
    .catch((e) => {
      fail(e);
      void bytes.cancel().catch(() => {});
    });
  return readable;
}
