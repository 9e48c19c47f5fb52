/** Alert rules' REST shapes (docs/outputs.md): a rule with its origin, and the rules' reader state. */
import { Type } from "@sinclair/typebox";
import { ReaderFields } from "../outputs/schemas";
import { AlertRule } from "./model";

export const RulesStatus = Type.Object(
  {
    ...ReaderFields,
    alerts: Type.Integer({ minimum: 0, description: "Alerts raised since Core started." }),
    suppressed: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), { description: "Per rule: alerts a cool-down held back since Core started." }),
  },
  { description: "The alert rules' reader." },
);

export const RuleInfo = Type.Object({
  rule: AlertRule,
  origin: Type.Union([Type.Literal("config"), Type.Literal("api")]),
  paused: Type.Boolean({ description: "Paused over REST: it raises no alert until resumed (kept across restarts)." }),
});

export const RULE_EXAMPLES = {
  login: { summary: "Any successful login", value: { name: "successful-login", severity: "high", match: { event_type: ["*.login.success"] }, cooldown_ms: 600000, outputs: ["slack"] } },
  fetch: {
    summary: "A command fetching something",
    value: { name: "download-command", severity: "high", match: { event_type: "cowrie.command.input", fields: [{ field: "data.input", regex: "\\b(wget|curl|tftp)\\b" }] }, outputs: ["slack"] },
  },
  brute: { summary: "20 failed logins from one address in a minute", value: { name: "brute-force", match: { event_type: "*.login.failed" }, threshold: { count: 20, window_ms: 60000 }, cooldown_ms: 3600000, outputs: ["slack"] } },
  asn: { summary: "A network never seen before", value: { name: "new-asn", severity: "low", new_value: "geo.asn", outputs: ["slack"] } },
};
