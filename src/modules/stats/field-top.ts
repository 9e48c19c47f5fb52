/**
 * `GET /api/v1/stats/top`: the most frequent values of any field a kind records (`path`,
 * `user_agent`, `data.image`, the pairs `username,password`...), over the range's most recent matching events, at most
 * COMMANDS_SAMPLE of them (db/stats-range.ts readRecent): what the kinds' dashboards list
 * (each kind's manifest names its fields, `dashboard`).
 */
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { badRequest, errorResponses } from "../../core/http/errors";
import type { NodeNames } from "../../core/http/node-ref";
import { queryParams } from "../../core/http/query";
import { fieldPaths } from "../../db/stats-range";
import type { EventFilter } from "../../db/event-queries";
import type { EventReader } from "../../db/stores";
import type { Ingest } from "../../core/ingest/types";
import { askedRange, rangeParams, sourceFilter } from "./range";
import { FieldTop } from "./schemas";

const FieldQuery = queryParams(
  Type.Object({
    field: Type.String({
      description: "The field's path in the events' data: `url`, `data.url` (the same) or nested keys like `request.method`; or up to 4 paths joined by commas, counted together (`username,password`: the pairs, as `root / 123456`).",
      example: "path",
    }),
    event_type: Type.Optional(Type.String({ description: "Only events of this type (what the field belongs to), e.g. `web.request`; a name ending in `.*` takes every type it starts (`cowrie.login.*`).", example: "web.request" })),
    ...rangeParams("24h"),
    top: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10, description: "Values listed.", example: 10 })),
  }),
);

export const fieldTopApi = (deps: { queries: EventReader; ingest: Ingest; nodes?: NodeNames }) =>
  new Elysia({ name: "stats-field-top" }).get(
    "/api/v1/stats/top",
    async ({ request }) => {
      const query = FieldQuery.parse(request.url);
      if (query.field === undefined) throw badRequest("query parameter field is required: the path of a data field, like path or data.url");
      const paths = fieldPaths(query.field);
      if (paths === null) throw badRequest(`query parameter field must be keys joined by dots, like url or data.request.method, or up to 4 of them joined by commas, like username,password; got ${JSON.stringify(query.field)}`);
      const asked = askedRange(query, "24h");
      const filter: EventFilter = { ...sourceFilter(query, deps.nodes), since: asked.range.from, until: asked.range.to };
      const type = query.event_type;
      if (type?.endsWith(".*")) {
        const prefix = type.slice(0, -1);
        filter.eventTypeMatch = (name) => name.startsWith(prefix);
      } else filter.eventType = type;
      await deps.ingest.countsSettled();
      const t = await deps.queries.topField(filter, paths, query.top ?? 10);
      return {
        field: query.field,
        event_type: query.event_type ?? null,
        window: asked.label,
        window_start: new Date(asked.range.from).toISOString(),
        window_end: new Date(asked.range.to).toISOString(),
        values: t.values,
        sampled: t.sampled,
      };
    },
    {
      response: { 200: FieldTop, ...errorResponses({ 400: ["bad_request", "query parameter field is required: the path of a data field, like path or data.url"] }) },
      detail: {
        parameters: FieldQuery.parameters,
        tags: ["Stats"],
        summary: "Top values of a data field",
        description:
          "The most frequent values of one field of the events' data (of one event type, node, pot or kind if asked) over a time range, counted over the range's most recent matching events (`sampled` says how many were read). A field no event has gives an empty list. Each kind's manifest names the fields worth a list (`dashboard` in `GET /api/v1/catalogue`).",
      },
    },
  );
