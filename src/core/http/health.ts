/** The answers of `GET /health`. */
import { t } from "elysia";

export const Health = t.Object({ status: t.Literal("ok") }, { example: { status: "ok" } });
export const Unhealthy = t.Object(
  { status: t.Literal("unhealthy"), reason: t.String({ description: "What fails, in words: events are not being committed, or the WAL is not being checkpointed." }) },
  { example: { status: "unhealthy", reason: "committing events fails: database or disk is full; 5000 events wait (received, not acknowledged)" } },
);
