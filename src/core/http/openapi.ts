/**
 * Completes the OpenAPI document that @elysiajs/swagger generates, so it validates as
 * OpenAPI 3.0: the plugin lifts a response schema's `example` onto the response object (where
 * 3.0 has no such field) and leaves `description` (required there) empty when the schema has
 * none. We move the example into the JSON media type and give every response a description.
 */
const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "202": "Accepted: the command is on its way to the node",
  "400": "Bad request",
  "401": "Missing or invalid API token",
  "403": "The token's role does not allow this",
  "404": "Not found",
  "409": "Conflict",
  "429": "Too many requests",
};

type Json = Record<string, any>;

/** JSON Schema keywords that OpenAPI 3.0 schemas lack: `const` becomes a one-value enum. */
function toOpenApi30(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(toOpenApi30);
  if (typeof node !== "object" || node === null) return;
  const o = node as Json;
  if ("const" in o && !("enum" in o)) {
    o.enum = [o.const];
    delete o.const;
  }
  // 3.0 has no `type: "null"`: a nullable union becomes `nullable: true`.
  if (Array.isArray(o.anyOf) && o.anyOf.some((s: Json) => s?.type === "null")) {
    const others = o.anyOf.filter((s: Json) => s?.type !== "null");
    delete o.anyOf;
    if (others.length === 1) Object.assign(o, { ...others[0], ...o });
    else o.anyOf = others;
    o.nullable = true;
  }
  // TypeBox's Record is `patternProperties`; 3.0 says the same with `additionalProperties`.
  if (o.patternProperties && typeof o.patternProperties === "object") {
    const values = Object.values<Json>(o.patternProperties);
    delete o.patternProperties;
    o.additionalProperties = values.length === 1 && Object.keys(values[0]!).length > 0 ? values[0] : true;
  }
  if (o.type === "null") {
    delete o.type;
    o.nullable = true;
  }
  if (Array.isArray(o.examples) && o.example === undefined && !("paths" in o)) {
    o.example = o.examples[0];
    delete o.examples;
  }
  for (const v of Object.values(o)) toOpenApi30(v);
}

export function completeOpenApi(generated: Json): Json {
  // A copy: the plugin's document holds the routes' own schema objects, which validate
  // requests and answers; changed in place, a later Core in the process refuses its answers.
  const doc = structuredClone(generated);
  toOpenApi30(doc.paths);
  toOpenApi30(doc.components);
  for (const ops of Object.values<Json>(doc.paths ?? {})) {
    for (const op of Object.values<Json>(ops)) {
      for (const [status, res] of Object.entries<Json>(op.responses ?? {})) {
        const { example, ...rest } = res;
        const content: Json = rest.content ?? {};
        // Responses are JSON only; the plugin also lists form and text types nobody sends.
        const json = content["application/json"];
        rest.content = json ? { "application/json": example === undefined ? json : { ...json, example } } : content;
        rest.description ||= STATUS_TEXT[status] ?? `Status ${status}`;
        op.responses[status] = rest;
      }
    }
  }
  return doc;
}
