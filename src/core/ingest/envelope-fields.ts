/**
 * The payload members the envelope scanner (scan-envelope.ts) reads, by name: a switch on the
 * key's length and first character, then one comparison in place, so that no key is sliced
 * into a string to be looked up. Every other member is data.
 */

export const OTHER = 0;
export const NODE_ID = 1;
export const POT_ID = 2;
export const POT_TYPE = 3;
export const EVENT_TYPE = 4;
export const EVENT = 5;
export const LOG_TYPE = 6;
export const TIMESTAMP = 7;
export const SRC_IP = 8;
export const DATA = 9;
export const METADATA = 10;
export const USERNAME = 11;
export const PASSWORD = 12;
export const PROTO = 13;
export const EVENTID = 14;
// Cowrie's HoneyBee output plugin names its pot in each line.
export const HONEYPOT_ID = 15;
export const HONEYPOT_TYPE = 16;

/** The member `t[at, at + len)` names (OTHER: none this scanner reads). */
export function fieldOf(t: string, at: number, len: number): number {
  const c = t.charCodeAt(at);
  switch (len) {
    case 4:
      return c === 100 && t.startsWith("data", at) ? DATA : OTHER;
    case 5:
      return c === 101 && t.startsWith("event", at) ? EVENT : OTHER;
    case 6:
      if (c === 112) return t.startsWith("pot_id", at) ? POT_ID : OTHER;
      return c === 115 && t.startsWith("src_ip", at) ? SRC_IP : OTHER;
    case 7:
      if (c === 110) return t.startsWith("node_id", at) ? NODE_ID : OTHER;
      return c === 101 && t.startsWith("eventid", at) ? EVENTID : OTHER;
    case 8:
      switch (c) {
        case 112:
          if (t.startsWith("pot_type", at)) return POT_TYPE;
          return t.startsWith("password", at) ? PASSWORD : OTHER;
        case 108:
          return t.startsWith("log_type", at) ? LOG_TYPE : OTHER;
        case 109:
          return t.startsWith("metadata", at) ? METADATA : OTHER;
        case 117:
          return t.startsWith("username", at) ? USERNAME : OTHER;
        default:
          return OTHER;
      }
    case 9:
      if (c === 116) return t.startsWith("timestamp", at) ? TIMESTAMP : OTHER;
      return c === 95 && t.startsWith("__proto__", at) ? PROTO : OTHER;
    case 10:
      return c === 101 && t.startsWith("event_type", at) ? EVENT_TYPE : OTHER;
    case 20:
      return c === 104 && t.startsWith("honeybee_honeypot_id", at) ? HONEYPOT_ID : OTHER;
    case 22:
      return c === 104 && t.startsWith("honeybee_honeypot_type", at) ? HONEYPOT_TYPE : OTHER;
    default:
      return OTHER;
  }
}
