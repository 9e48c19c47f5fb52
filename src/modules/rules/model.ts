/** Alert rule definitions (docs/outputs.md): one TypeBox schema feeds validation, types and OpenAPI. */
import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { firstError, Name } from "../outputs/model";
import { MAX_PROGRAM, MAX_TEXT } from "./regex";

const OneOrMany = <T extends ReturnType<typeof Type.String> | ReturnType<typeof Type.Integer>>(item: T, description: string) =>
  Type.Union([item, Type.Array(item, { minItems: 1, maxItems: 1000 })], { description });

export const FieldCondition = Type.Object(
  {
    field: Type.String({ pattern: "^(data|geo)(\\.[^.]+)+$|^(src_ip|pot_id|pot_type|event_type|node_id)$", description: "Where to look: `data.<key>[.<key>...]` (the honeypot's fields), `geo.country`, `geo.asn`, or a column." }),
    equals: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()], { description: "Matches when the value is exactly this." })),
    regex: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: `Matches when the value (as text) matches this regular expression, in RE2 syntax: matching takes time linear in the text, so backreferences and lookaround are refused (400), as is a pattern that compiles to more than ${MAX_PROGRAM} instructions (\`x{n}\` counts n). Reads the first ${MAX_TEXT} characters of the value.`,
      }),
    ),
    ignore_case: Type.Optional(Type.Boolean({ default: false, description: "For `regex`." })),
  },
  { additionalProperties: false },
);

export const RuleMatch = Type.Object(
  {
    event_type: Type.Optional(OneOrMany(Type.String({ minLength: 1 }), "Event type pattern(s), `*` matching any characters.")),
    pot_id: Type.Optional(OneOrMany(Type.String({ minLength: 1 }), "Honeypot id pattern(s).")),
    pot_type: Type.Optional(OneOrMany(Type.String({ minLength: 1 }), "Honeypot kind pattern(s).")),
    node_id: Type.Optional(OneOrMany(Type.String({ pattern: "^[0-9]{1,20}$" }), "Node id(s).")),
    src_ip: Type.Optional(OneOrMany(Type.String({ minLength: 1 }), "Source address(es) or CIDR block(s), IPv4 or IPv6.")),
    country: Type.Optional(OneOrMany(Type.String({ pattern: "^[A-Za-z]{2}$" }), "ISO 3166 country code(s) of the source (`geo.country`); needs enrichment.")),
    asn: Type.Optional(OneOrMany(Type.Integer({ minimum: 0 }), "Autonomous system number(s) of the source (`geo.asn`); needs enrichment.")),
    fields: Type.Optional(Type.Array(FieldCondition, { maxItems: 32, description: "Every condition must hold." })),
  },
  { additionalProperties: false, description: "Every condition given must hold; an absent one matches anything." },
);

export const AlertRule = Type.Object(
  {
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    severity: Type.Optional(Type.Union([Type.Literal("low"), Type.Literal("medium"), Type.Literal("high"), Type.Literal("critical")], { default: "medium" })),
    match: Type.Optional(RuleMatch),
    threshold: Type.Optional(
      Type.Object(
        {
          count: Type.Integer({ minimum: 2, maximum: 1_000_000, description: "Matching events from one source address..." }),
          window_ms: Type.Integer({ minimum: 1, maximum: 30 * 86_400_000, description: "...within this long (by the events' timestamps)." }),
        },
        { additionalProperties: false, description: "Fire only when this many matching events came from one address within the window." },
      ),
    ),
    new_value: Type.Optional(
      Type.String({ pattern: "^(data|geo)(\\.[^.]+)+$|^(src_ip|pot_id|pot_type|event_type|node_id)$", description: "Fire when a matching event has a value of this field never seen before (`geo.asn`: a new network). Remembered across restarts." }),
    ),
    cooldown_ms: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 30 * 86_400_000, default: 600_000, description: "After firing for a source address, stay quiet for it this long (by the events' timestamps)." }),
    ),
    outputs: Type.Optional(Type.Array(Name, { maxItems: 64, default: [], description: "Outputs that get this rule's alerts (besides those whose event_types take `alert.*`)." })),
  },
  {
    additionalProperties: false,
    example: { name: "download-command", severity: "high", match: { event_type: "cowrie.command.input", fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] }, cooldown_ms: 600000, outputs: ["slack"] },
  },
);
export type AlertRule = Static<typeof AlertRule>;
export type RuleMatch = Static<typeof RuleMatch>;

export function parseRule(raw: unknown): { ok: true; value: AlertRule } | { ok: false; error: string } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: false, error: "a rule is a JSON object with a name" };
  const value = Value.Default(AlertRule, structuredClone(raw));
  const err = firstError(AlertRule, value);
  if (err) return { ok: false, error: `invalid rule: ${err}` };
  return { ok: true, value: value as AlertRule };
}
