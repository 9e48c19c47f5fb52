/**
 * `GET /api/v1/stats/timeline`: committed events per step (a minute by default) over a recent
 * window or a from/to range, of a node, pot or kind if asked, oldest first: what the console's
 * "events per minute" charts start from before the live feed keeps them current.
 */
import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { rangeSteps, timelineSteps, type TimelineStorage } from "../../db/timeline";
import { badRequest, errorResponses } from "../../core/http/errors";
import type { NodeNames } from "../../core/http/node-ref";
import { queryParams } from "../../core/http/query";
import { askedRange, rangeParams, sourceFilter } from "./range";
import { Timeline } from "./schemas";

const MAX_STEPS = 1440;
const STEP = /^([1-9][0-9]{0,3})([mh])$/;

const TimelineQuery = queryParams(
  Type.Object({
    ...rangeParams("1h"),
    step: Type.Optional(Type.String({ description: `Step: minutes or hours, e.g. \`1m\`, \`1h\` (at most ${MAX_STEPS} steps over the range).`, default: "1m", example: "1m" })),
  }),
);

function parseStep(raw: string): number {
  const m = STEP.exec(raw);
  if (!m) throw badRequest(`step must be a number of minutes or hours like 1m or 1h, got ${JSON.stringify(raw)}`);
  return Number(m[1]) * (m[2] === "h" ? 3_600_000 : 60_000);
}

export const timelineApi = (timeline: TimelineStorage, nodes?: NodeNames) =>
  new Elysia({ name: "timeline" }).get(
    "/api/v1/stats/timeline",
    async ({ request }) => {
      const query = TimelineQuery.parse(request.url);
      const now = Date.now();
      const asked = askedRange(query, "1h", now);
      const stepMs = parseStep(query.step ?? "1m");
      const steps = asked.windowMs !== null ? timelineSteps(asked.windowMs, stepMs, now) : rangeSteps(asked.range.from, asked.range.to, stepMs);
      const n = Math.round((steps.end - steps.start) / stepMs);
      if (n > MAX_STEPS) throw badRequest(`window / step gives ${n} steps; at most ${MAX_STEPS}: take a larger step`);
      const tl = await timeline.timeline({ ...steps, filter: sourceFilter(query, nodes) });
      return { start: new Date(tl.start).toISOString(), step_seconds: stepMs / 1000, counts: tl.counts };
    },
    {
      response: { 200: Timeline, ...errorResponses({ 400: ["bad_request", "window / step gives 10080 steps; at most 1440: take a larger step"] }) },
      detail: {
        parameters: TimelineQuery.parameters,
        tags: ["Stats"],
        summary: "Events per minute (or hour) over a range",
        description:
          "Committed events counted by their time, per step, oldest first, of one node, pot or kind if asked. With a `window` the last step is the one in progress; with `from`/`to` the steps (multiples of the step) cover the range. A stored segment (4096 events) wholly in one step is counted from its summary (with a filter, from its counts by source, read once and kept); the others are read, so a step shorter than a segment's time span reads the range's events.",
      },
    },
  );
