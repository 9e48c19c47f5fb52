/**
 * The texts of a request the classifier and the payload finder read: the target split into path
 * and query, each also percent-decoded (repeatedly: scanners encode twice, %252e, to get past
 * filters that decode once), the header values and the captured body. All text is Latin-1, one
 * character per byte, so no byte sequence can fail to decode.
 */

export interface RequestText {
  method: string;
  target: string;
  headers: [string, string][];
  /** The captured body (bounded), Latin-1. */
  body: string;
}

export interface Views {
  method: string;
  /** The request-target as sent. */
  target: string;
  rawPath: string;
  rawQuery: string;
  path: string;
  query: string;
  /** Header values with their names, in order. */
  headers: [string, string][];
  body: string;
  /** The body decoded as a form when it looks like one (a=b&c=d). */
  bodyDecoded: string;
}

/** Decodes %XX (and %uXXXX, IIS style) up to `rounds` times; bytes stay Latin-1 characters. */
export function percentDecode(text: string, plusAsSpace = false, rounds = 3): string {
  let out = plusAsSpace ? text.replaceAll("+", " ") : text;
  for (let i = 0; i < rounds && out.includes("%"); i++) {
    const next = out
      .replace(/%u([0-9A-Fa-f]{4})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16) & 0xff))
      .replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

export function views(req: RequestText): Views {
  const q = req.target.indexOf("?");
  const rawPath = q < 0 ? req.target : req.target.slice(0, q);
  const rawQuery = q < 0 ? "" : req.target.slice(q + 1);
  const looksLikeForm = /^[\w.%[\]-]+=/.test(req.body);
  return {
    method: req.method,
    target: req.target,
    rawPath,
    rawQuery,
    path: percentDecode(rawPath),
    query: percentDecode(rawQuery, true),
    headers: req.headers,
    body: req.body,
    bodyDecoded: looksLikeForm ? percentDecode(req.body, true) : req.body,
  };
}
