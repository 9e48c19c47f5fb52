/**
 * `GET /api/v1/stats/timeline`: committed events per step (a minute by default) over a recent
 * window, oldest first: what the console's "events per minute" charts start from before the
 * live feed keeps them current.
 */
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { TimelineStorage } from "../../db/timeline";
import { badRequest, errorResponses } from "../../core/http/errors";
import { queryParams } from "../../core/http/query";
import { parseWindow } from "../../core/http/time-params";

const MAX_STEPS = 1440;
const STEP = /^([1-9][0-9]{0,3})([mh])$/;

export const Timeline = t.Object(
  {
    start: t.String({ description: "Start of the first step (ISO 8601)." }),
    step_seconds: t.Integer({ minimum: 60 }),
    counts: t.Array(t.Integer({ minimum: 0 }), { description: "Events per step, oldest first; the last step is the one now in progress." }),
  },
  { example: { start: "2026-11-22T00:01:00.000Z", step_seconds: 60, counts: [0, 4, 17] } },
);

const TimelineQuery = queryParams(
  Type.Object({
    window: Type.Optional(Type.String({ description: "How far back: hours or days, e.g. `1h`, `24h`.", default: "1h", example: "24h" })),
    step: Type.Optional(Type.String({ description: `Step: minutes or hours, e.g. \`1m\`, \`1h\` (at most ${MAX_STEPS} steps per window).`, default: "1m", example: "1m" })),
  }),
);

function parseStep(raw: string): number {
  const m = STEP.exec(raw);
  if (!m) throw badRequest(`step must be a number of minutes or hours like 1m or 1h, got ${JSON.stringify(raw)}`);
  return Number(m[1]) * (m[2] === "h" ? 3_600_000 : 60_000);
}

export const timelineApi = (timeline: TimelineStorage) =>
  new Elysia({ name: "timeline" }).get(
    "/api/v1/stats/timeline",
    async ({ request }) => {
      const query = TimelineQuery.parse(request.url);
      const windowMs = parseWindow(query.window ?? "1h");
      const stepMs = parseStep(query.step ?? "1m");
      if (windowMs / stepMs > MAX_STEPS) throw badRequest(`window / step gives ${Math.ceil(windowMs / stepMs)} steps; at most ${MAX_STEPS}: take a larger step`);
      const tl = await timeline.timeline(windowMs, stepMs);
      return { start: new Date(tl.start).toISOString(), step_seconds: stepMs / 1000, counts: tl.counts };
    },
    {
      response: { 200: Timeline, ...errorResponses({ 400: ["bad_request", "window / step gives 10080 steps; at most 1440: take a larger step"] }) },
      detail: {
        parameters: TimelineQuery.parameters,
        tags: ["Stats"],
        summary: "Events per minute (or hour) over a window",
        description: "Committed events counted by their time, per step, oldest first. The scan starts at the first stored segment that reaches into the window, so its cost grows with the events in the window.",
      },
    },
  );
