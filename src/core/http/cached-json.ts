/**
 * A JSON response built once per change of its source instead of once per request.
 *
 * The registry changes a few times a minute and is read far more often (dashboards, CLIs
 * polling). Building, validating and serialising 1,000 honeypots took ~95% of each request,
 * so the body is rebuilt, checked against its TypeBox schema, and serialised only when the
 * registry's version moves; every other request sends the same bytes.
 */
import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { stringify } from "../../protocol/json";

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export function cachedJson<T>(schema: TSchema, version: () => number, build: () => T): () => Response {
  const check = TypeCompiler.Compile(schema);
  let at = -1;
  // Encoded once: a string body would be encoded to UTF-8 again for every response.
  let body: Uint8Array = new Uint8Array(0);
  return () => {
    const v = version();
    if (v !== at) {
      const value = build();
      if (!check.Check(value)) {
        const e = check.Errors(value).First();
        throw new Error(`response does not match its schema at ${e?.path}: ${e?.message}`);
      }
      body = new TextEncoder().encode(stringify(value));
      at = v;
    }
    return new Response(body, { headers: JSON_HEADERS });
  };
}
