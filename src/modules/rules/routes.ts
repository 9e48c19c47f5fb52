/**
 * Alert rules over REST (docs/outputs.md). Reads need the read role, changes the operator role
 * (as every non-GET request). A rule is checked against its schema, its regexes and CIDRs, and
 * the outputs it names.
 */
import { Elysia, t } from "elysia";
import { ApiError, errorResponses, notFound, refused } from "../../core/http/errors";
import { noQuery } from "../../core/http/query";
import type { Rules } from "./service";
import { AlertRule } from "./model";
import { RULE_EXAMPLES, RuleInfo, RulesStatus } from "./schemas";

type Example = [code: string, message: string];
const NOT_FOUND: { 404: Example } = { 404: ["not_found", "rule brute-force does not exist"] };
const CHANGE_ERRORS: { 404: Example; 409: Example } = { ...NOT_FOUND, 409: ["conflict", "rule brute-force is defined in the config file; pause it there"] };
const BAD_RULE: Example = ["bad_request", "invalid rule: fields: data.input: Invalid regular expression: /(wget/: Unterminated group"];

/** A misspelt output name would drop the rule's alerts without a word. */
function checkOutputs(body: unknown, hasOutput: (name: string) => boolean): void {
  const routed = (body as { outputs?: unknown } | null)?.outputs;
  const unknown = Array.isArray(routed) ? routed.filter((n) => typeof n === "string" && !hasOutput(n)) : [];
  if (unknown.length > 0) throw new ApiError(400, "bad_request", `invalid rule: /outputs names no output: ${unknown.join(", ")}`);
}

/** Pause and resume. */
const pauseRoutes = (rules: Rules) => {
  const app = new Elysia({ name: "rules-pause" });
  for (const paused of [true, false]) {
    app.post(
      `/api/v1/rules/:name/${paused ? "pause" : "resume"}`,
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await rules.pause(params.name, paused);
        if (!r.ok) throw refused(r);
        return rules.get(params.name)!;
      },
      {
        response: { 200: RuleInfo, ...errorResponses(CHANGE_ERRORS) },
        detail: {
          tags: ["Rules"],
          summary: paused ? "Pause an alert rule" : "Resume a paused alert rule",
          description: paused
            ? "It raises no alert until resumed (kept across restarts, on every instance). Already paused: nothing changes. Rules of the config file: 409."
            : "It applies again from the next event the rules read. Not paused: nothing changes.",
        },
      },
    );
  }
  return app;
};

/** `hasOutput` says whether an output of that name exists: a rule naming none is refused. */
export const rulesApi = (rules: Rules, hasOutput: (name: string) => boolean) =>
  new Elysia({ name: "rules" })
    .get(
      "/api/v1/rules",
      ({ request }) => {
        noQuery(request.url);
        return { rules: rules.list(), status: rules.status() };
      },
      { response: { 200: t.Object({ rules: t.Array(RuleInfo), status: RulesStatus }) }, detail: { tags: ["Rules"], summary: "List alert rules" } },
    )
    .get(
      "/api/v1/rules/:name",
      ({ params, request }) => {
        noQuery(request.url);
        const r = rules.get(params.name);
        if (!r) throw notFound(`rule ${params.name} does not exist`);
        return r;
      },
      { response: { 200: RuleInfo, ...errorResponses(NOT_FOUND) }, detail: { tags: ["Rules"], summary: "Get one alert rule" } },
    )
    .put(
      "/api/v1/rules/:name",
      async ({ body, params, request }) => {
        noQuery(request.url);
        checkOutputs(body, hasOutput);
        const r = await rules.update(params.name, body);
        if (!r.ok) throw refused(r);
        return rules.get(params.name)!;
      },
      {
        response: { 200: RuleInfo, ...errorResponses({ 400: ["bad_request", "invalid rule: /outputs names no output: pager"], ...CHANGE_ERRORS }) },
        detail: {
          tags: ["Rules"],
          summary: "Replace an alert rule",
          description:
            "The whole rule, as for adding one (`name`, if given, must be the one in the path). It applies from the next event the rules read; a paused rule stays paused; " +
            "its thresholds and cool-downs start afresh, and a changed `new_value` field forgets the values seen. 400 names the problem; rules of the config file are changed there (409).",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: AlertRule as any, examples: RULE_EXAMPLES }) } },
        },
      },
    )
    .use(pauseRoutes(rules))
    .post(
      "/api/v1/rules",
      async ({ body, request, set }) => {
        noQuery(request.url);
        checkOutputs(body, hasOutput);
        const r = await rules.add(body);
        if (!r.ok) throw refused(r);
        set.status = 201;
        return rules.get((body as { name: string }).name)!;
      },
      {
        response: {
          201: RuleInfo,
          ...errorResponses({ 400: BAD_RULE, 409: ["conflict", "a rule named successful-login exists already"] }),
        },
        detail: {
          tags: ["Rules"],
          summary: "Add an alert rule",
          description:
            "Applies from the next committed event on. An alert is stored as an event of type `alert.<rule>` (with the node, pot and source address of the event that raised it) " +
            "and shipped to the outputs the rule names. 400 names the problem (schema, regex, CIDR); 409 when the name is taken.",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: AlertRule as any, examples: RULE_EXAMPLES }) } },
        },
      },
    )
    .delete(
      "/api/v1/rules/:name",
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await rules.remove(params.name);
        if (!r.ok) throw refused(r);
        return { deleted: params.name };
      },
      {
        response: { 200: t.Object({ deleted: t.String() }), ...errorResponses({ ...NOT_FOUND, 409: ["conflict", "rule brute-force is defined in the config file; remove it there"] }) },
        detail: { tags: ["Rules"], summary: "Remove an alert rule" },
      },
    );
