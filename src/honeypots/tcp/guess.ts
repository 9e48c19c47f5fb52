/**
 * Which protocol a client spoke, guessed from the first bytes it sent to a port that answered
 * nothing: a table of signatures, tried in order, each reading only the fixed start of its
 * protocol's first message (and a few fields from it when that is cheap: TLS's SNI and JA3/JA4,
 * an HTTP request line, SSH's version, RDP's cookie...). Pure: bytes in, a name and fields out.
 */
import { BINARY_SIGNATURES } from "./binary-protocols.ts";
import type { GuessFields, Signature } from "./bytes.ts";
import { LENGTH_SIGNATURES } from "./length-protocols.ts";
import { TEXT_SIGNATURES } from "./text-protocols.ts";

export interface Guess {
  /** A signature's name, or "unknown". */
  protocol: string;
  /** What the signature read from the bytes, flat, to be spread into the event. */
  fields: GuessFields;
}

/** Magic numbers first, then text, then the protocols recognised by their length fields alone. */
const SIGNATURES: readonly Signature[] = [...BINARY_SIGNATURES, ...TEXT_SIGNATURES, ...LENGTH_SIGNATURES];

/** Every name a guess can give, "unknown" last. */
export const PROTOCOLS: readonly string[] = [...new Set(SIGNATURES.map((s) => s.name)), "unknown"];

export function guessProtocol(bytes: Uint8Array): Guess {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (b.length === 0) return { protocol: "unknown", fields: {} };
  for (const signature of SIGNATURES) {
    let fields: GuessFields | null = null;
    try {
      fields = signature.match(b);
    } catch {
      // The bytes are the attacker's: a signature that trips on them simply does not match.
    }
    if (fields) return { protocol: signature.name, fields };
  }
  return { protocol: "unknown", fields: {} };
}
