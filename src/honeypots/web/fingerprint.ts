/**
 * Client fingerprints: JA3 (Salesforce) and JA4 (FoxIO, BSD 3-Clause) from a ClientHello, JA4H
 * (FoxIO License 1.1, free for uses such as this one that are not sold) from an HTTP request.
 * GREASE values are left out everywhere, as both specifications say.
 */
import { createHash } from "node:crypto";
import { type ClientHello, isGrease } from "./clienthello.ts";

const hex4 = (v: number) => v.toString(16).padStart(4, "0");
const sha12 = (text: string) => (text === "" ? "000000000000" : createHash("sha256").update(text).digest("hex").slice(0, 12));
const twoDigits = (n: number) => String(Math.min(n, 99)).padStart(2, "0");
const noGrease = (values: number[]) => values.filter((v) => !isGrease(v));

/** JA3's text: version,ciphers,extensions,groups,point formats, each list in decimal joined by "-". */
export function ja3Text(hello: ClientHello): string {
  const list = (values: number[]) => noGrease(values).join("-");
  return [String(hello.version), list(hello.ciphers), list(hello.extensions), list(hello.groups), hello.pointFormats.join("-")].join(",");
}

export function ja3Hash(text: string): string {
  return createHash("md5").update(text).digest("hex");
}

/** Protocol versions: JA4's two characters and the name OpenSSL gives them. */
const VERSIONS = new Map<number, [string, string]>([
  [0x0304, ["13", "TLSv1.3"]],
  [0x0303, ["12", "TLSv1.2"]],
  [0x0302, ["11", "TLSv1.1"]],
  [0x0301, ["10", "TLSv1"]],
  [0x0300, ["s3", "SSLv3"]],
  [0x0002, ["s2", "SSLv2"]],
]);

export function versionName(version: number): string {
  return VERSIONS.get(version)?.[1] ?? `0x${version.toString(16).padStart(4, "0")}`;
}

/** The highest version in supported_versions when sent, else the hello's own version. */
export function offeredVersion(hello: ClientHello): number {
  const supported = noGrease(hello.supportedVersions);
  return hello.extensions.includes(43) && supported.length > 0 ? Math.max(...supported) : hello.version;
}

const alnum = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);

/** First and last character of the first ALPN value; its hex digits when either byte is not alphanumeric. */
function alpnChars(alpn: Uint8Array[]): string {
  const first = alpn[0];
  if (!first || first.length === 0) return "00";
  const a = first[0]!;
  const z = first[first.length - 1]!;
  if (alnum(a) && alnum(z)) return String.fromCharCode(a, z);
  const hex = Buffer.from(first).toString("hex");
  return hex[0]! + hex[hex.length - 1]!;
}

export interface Ja4 {
  ja4: string;
  /** The same with the lists in clear (FoxIO's JA4_r), for analysts who compare parts. */
  ja4_r: string;
}

export function ja4(hello: ClientHello): Ja4 {
  const ciphers = noGrease(hello.ciphers);
  const extensions = noGrease(hello.extensions);
  const a = `t${VERSIONS.get(offeredVersion(hello))?.[0] ?? "00"}${hello.extensions.includes(0) ? "d" : "i"}${twoDigits(ciphers.length)}${twoDigits(extensions.length)}${alpnChars(hello.alpn)}`;
  const sortedCiphers = ciphers.map(hex4).sort().join(",");
  // SNI and ALPN are already in part a; leaving them out keeps part c the same for one client whatever it connects to.
  const sortedExtensions = extensions
    .filter((e) => e !== 0 && e !== 0x10)
    .map(hex4)
    .sort()
    .join(",");
  const sigalgs = noGrease(hello.signatureAlgorithms).map(hex4).join(",");
  const c = sortedExtensions === "" ? "" : sigalgs === "" ? sortedExtensions : `${sortedExtensions}_${sigalgs}`;
  return { ja4: `${a}_${sha12(sortedCiphers)}_${sha12(c)}`, ja4_r: `${a}_${sortedCiphers}_${c}` };
}

export interface HttpRequestShape {
  method: string;
  /** "HTTP/1.1", "HTTP/1.0" ... */
  version: string;
  /** Header fields as sent: names with their case, in order. */
  headers: [string, string][];
}

/** The first language of Accept-Language, without "-", four characters padded with "0". */
function language(value: string | undefined): string {
  if (value === undefined) return "0000";
  const first = value.replaceAll("-", "").replaceAll(";", ",").toLowerCase().split(",")[0]!.trim();
  return first.slice(0, 4).padEnd(4, "0");
}

export function ja4h(req: HttpRequestShape): string {
  const method = req.method.toLowerCase().slice(0, 2).padEnd(2, "0");
  const version = /^HTTP\/(\d)\.(\d)$/.exec(req.version);
  const ver = version ? `${version[1]}${version[2]}` : "00";
  let cookie = false;
  let referer = false;
  let acceptLanguage: string | undefined;
  const names: string[] = [];
  const cookies: { name: string; pair: string }[] = [];
  for (const [name, value] of req.headers) {
    const lower = name.toLowerCase();
    if (lower === "cookie") {
      cookie = true;
      for (const part of value.split(";")) {
        const pair = part.trim();
        if (pair !== "") cookies.push({ name: pair.split("=")[0]!.trim(), pair });
      }
    } else if (lower === "referer") referer = true;
    else {
      names.push(name);
      if (lower === "accept-language" && acceptLanguage === undefined) acceptLanguage = value;
    }
  }
  cookies.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.pair < y.pair ? -1 : x.pair > y.pair ? 1 : 0));
  const a = `${method}${ver}${cookie ? "c" : "n"}${referer ? "r" : "n"}${twoDigits(names.length)}${language(acceptLanguage)}`;
  const c = cookies.map((x) => x.name).join(",");
  const d = cookies.map((x) => x.pair).join(",");
  return `${a}_${sha12(names.join(","))}_${sha12(c)}_${sha12(d)}`;
}
