/**
 * Telnet (RFC 854) framing: separates option negotiation from data. Subnegotiations are skipped
 * without being stored, so a client cannot grow a buffer by never sending IAC SE.
 */

export const IAC = 255;
export const DONT = 254;
export const DO = 253;
export const WONT = 252;
export const WILL = 251;
const SB = 250;
const SE = 240;
export const OPT_ECHO = 1;
export const OPT_SGA = 3;
export const OPT_TTYPE = 24;
export const OPT_TSPEED = 32;
export const OPT_XDISPLOC = 35;
export const OPT_NEW_ENVIRON = 39;

export interface Negotiation {
  verb: number;
  option: number;
}

type State = "data" | "iac" | "option" | "sb" | "sb-iac";

export class TelnetDecoder {
  private state: State = "data";
  private verb = 0;

  decode(chunk: Uint8Array): { data: Uint8Array; negotiations: Negotiation[] } {
    const data = new Uint8Array(chunk.length);
    let n = 0;
    const negotiations: Negotiation[] = [];
    for (const byte of chunk) {
      switch (this.state) {
        case "data":
          if (byte === IAC) this.state = "iac";
          else data[n++] = byte;
          break;
        case "iac":
          if (byte === IAC) {
            data[n++] = IAC;
            this.state = "data";
          } else if (byte >= WILL && byte <= DONT) {
            this.verb = byte;
            this.state = "option";
          } else this.state = byte === SB ? "sb" : "data";
          break;
        case "option":
          negotiations.push({ verb: this.verb, option: byte });
          this.state = "data";
          break;
        case "sb":
          if (byte === IAC) this.state = "sb-iac";
          break;
        case "sb-iac":
          this.state = byte === SE ? "data" : "sb";
          break;
      }
    }
    return { data: data.subarray(0, n), negotiations };
  }
}

/** Doubles every 0xFF in outgoing data, which would otherwise start a command. */
export function escapeIac(data: Uint8Array): Uint8Array {
  if (!data.includes(IAC)) return data;
  const out: number[] = [];
  for (const byte of data) {
    out.push(byte);
    if (byte === IAC) out.push(IAC);
  }
  return Uint8Array.from(out);
}
