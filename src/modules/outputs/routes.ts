/**
 * Outputs over REST (docs/outputs.md). Reads need the read role, changes the operator role (as
 * every non-GET request). Definitions are checked against their type's own schema, so an error
 * names the field; credentials in definitions are never shown.
 */
import { Elysia, t } from "elysia";
import { errorResponses, notFound, refused } from "../../core/http/errors";
import { noQuery } from "../../core/http/query";
import type { Outputs } from "./service";
import { OutputDefinition } from "./model";
import { OUTPUT_EXAMPLES, OutputInfo } from "./schemas";

export const outputsApi = (outputs: Outputs) =>
  new Elysia({ name: "outputs" })
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
      { response: { 200: OutputInfo, ...errorResponses({ 404: ["not_found", "output siem does not exist"] }) }, detail: { tags: ["Outputs"], summary: "Get one output" } },
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
        response: { 200: t.Object({ deleted: t.String() }), ...errorResponses({ 404: ["not_found", "output siem does not exist"], 409: ["conflict", "output siem is defined in the config file; remove it there"] }) },
        detail: { tags: ["Outputs"], summary: "Remove an output", description: "Stops it and forgets its position. Outputs of the config file are removed there (409)." },
      },
    );
