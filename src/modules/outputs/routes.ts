/**
 * Outputs over REST (docs/outputs.md). Reads need the read role, changes the operator role (as
 * every non-GET request). Definitions are checked against their type's own schema, so an error
 * names the field; credentials in definitions are never shown.
 */
import { Elysia, t } from "elysia";
import { errorResponses, notFound, refused } from "../../core/http/errors";
import { noQuery } from "../../core/http/query";
import type { Outputs } from "./service";
import { OUTPUT_SCHEMAS, OutputDefinition } from "./model";
import { secretFields } from "./redact";
import { OUTPUT_EXAMPLES, OutputInfo, OutputTypes, TestResult } from "./schemas";

/** The output types as JSON Schema (a plain copy: TypeBox's symbol keys are not JSON). */
const TYPES = {
  types: Object.entries(OUTPUT_SCHEMAS).map(([type, schema]) => ({ type, schema: JSON.parse(JSON.stringify(schema)), secrets: secretFields(schema.properties) })),
};

type Example = [code: string, message: string];
const NOT_FOUND: { 404: Example } = { 404: ["not_found", "output siem does not exist"] };
const CHANGE_ERRORS: { 404: Example; 409: Example } = { ...NOT_FOUND, 409: ["conflict", "output siem is defined in the config file; pause it there"] };

/** Pause and resume. */
const pauseRoutes = (outputs: Outputs) => {
  const app = new Elysia({ name: "outputs-pause" });
  for (const paused of [true, false]) {
    app.post(
      `/api/v1/outputs/:name/${paused ? "pause" : "resume"}`,
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await outputs.pause(params.name, paused);
        if (!r.ok) throw refused(r);
        return outputs.get(params.name)!;
      },
      {
        response: { 200: OutputInfo, ...errorResponses(CHANGE_ERRORS) },
        detail: {
          tags: ["Outputs"],
          summary: paused ? "Pause an output" : "Resume a paused output",
          description: paused
            ? "It stops delivering and keeps its position (state `paused`, across restarts and on every instance); resumed, it delivers what was committed meanwhile. Already paused: nothing changes. Outputs of the config file: 409."
            : "It goes on from its position: what was committed while it was paused is delivered. Not paused: nothing changes.",
        },
      },
    );
  }
  return app;
};

export const outputsApi = (outputs: Outputs) =>
  new Elysia({ name: "outputs" })
    .get(
      "/api/v1/output-types",
      ({ request }) => {
        noQuery(request.url);
        return TYPES;
      },
      {
        response: { 200: OutputTypes },
        detail: {
          tags: ["Outputs"],
          summary: "List the output types with their schemas",
          description: "The JSON Schema each definition is checked against, with descriptions, defaults and required fields (the console builds its output form from it), and which fields are credentials.",
        },
      },
    )
    .get(
      "/api/v1/outputs",
      ({ request }) => {
        noQuery(request.url);
        return { outputs: outputs.list() };
      },
      { response: { 200: t.Object({ outputs: t.Array(OutputInfo) }) }, detail: { tags: ["Outputs"], summary: "List outputs with their delivery state" } },
    )
    .get(
      "/api/v1/outputs/:name",
      ({ params, request }) => {
        noQuery(request.url);
        const o = outputs.get(params.name);
        if (!o) throw notFound(`output ${params.name} does not exist`);
        return o;
      },
      { response: { 200: OutputInfo, ...errorResponses(NOT_FOUND) }, detail: { tags: ["Outputs"], summary: "Get one output" } },
    )
    .put(
      "/api/v1/outputs/:name",
      async ({ body, params, request }) => {
        noQuery(request.url);
        const r = await outputs.update(params.name, body);
        if (!r.ok) throw refused(r);
        return outputs.get(params.name)!;
      },
      {
        response: { 200: OutputInfo, ...errorResponses({ 400: ["bad_request", "invalid webhook output: /url Expected string to match '^https?://'"], ...CHANGE_ERRORS }) },
        detail: {
          tags: ["Outputs"],
          summary: "Replace an output's definition",
          description:
            "The whole definition, as for adding one (`name`, if given, must be the one in the path: an output is not renamed). It keeps its position and whether it is paused. " +
            "Credentials are write-only: a secret field (`secret`, `password`, `pass`, `token`) left out or sent as `(set)` keeps the stored one, `null` removes it; " +
            "`headers` left out keeps the stored headers, a header sent as `(set)` its stored value; a `url` or `servers` sent as GET shows it keeps the stored one. " +
            "400 names the field; outputs of the config file are changed there (409).",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: OutputDefinition as any, examples: OUTPUT_EXAMPLES }) } },
        },
      },
    )
    .use(pauseRoutes(outputs))
    .post(
      "/api/v1/outputs/:name/test",
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await outputs.test(params.name);
        if (!r) throw notFound(`output ${params.name} does not exist`);
        return r;
      },
      {
        response: { 200: TestResult, ...errorResponses(NOT_FOUND) },
        detail: {
          tags: ["Outputs"],
          summary: "Send a test event through an output",
          description:
            "Sends one sample event now (the example event of GET /api/v1/events with `data.test: true` and id 0), on a connection of its own, paused or not, outside the output's position and counts, " +
            "and answers what happened: `delivered`, or the error (credentials hidden). Config-file outputs too.",
        },
      },
    )
    .post(
      "/api/v1/outputs",
      async ({ body, request, set }) => {
        noQuery(request.url);
        const r = await outputs.add(body);
        if (!r.ok) throw refused(r);
        set.status = 201;
        return outputs.get((body as { name: string }).name)!;
      },
      {
        response: {
          201: OutputInfo,
          ...errorResponses({ 400: ["bad_request", "invalid syslog output: /host Expected required property"], 409: ["conflict", "an output named siem exists already"] }),
        },
        detail: {
          tags: ["Outputs"],
          summary: "Add an output",
          description:
            "Starts shipping at once (from the newest event, or every stored one with `from: earliest`) and is kept across restarts. " +
            "The definition is checked against its type's schema: 400 names the field. 409 when the name is taken. docs/outputs.md describes each type and the guarantee it gives.",
          requestBody: { required: true, content: { "application/json": structuredClone({ schema: OutputDefinition as any, examples: OUTPUT_EXAMPLES }) } },
        },
      },
    )
    .delete(
      "/api/v1/outputs/:name",
      async ({ params, request }) => {
        noQuery(request.url);
        const r = await outputs.remove(params.name);
        if (!r.ok) throw refused(r);
        return { deleted: params.name };
      },
      {
        response: { 200: t.Object({ deleted: t.String() }), ...errorResponses({ ...NOT_FOUND, 409: ["conflict", "output siem is defined in the config file; remove it there"] }) },
        detail: { tags: ["Outputs"], summary: "Remove an output", description: "Stops it and forgets its position. Outputs of the config file are removed there (409)." },
      },
    );
