/**
 * Roles decided by the route that matched. Every REST request is admitted before routing with
 * the role its method asks (auth/index.ts: reads for GET and HEAD, operator otherwise); a route
 * that needs more says so with `{ role: "operator" }`. Checked after routing, so a path spelt
 * another way (`/download/`, `/download/.`) that reaches the route meets the same check: the
 * URL's text decided it before, and the router matches more spellings than a text test does.
 */
import { Elysia } from "elysia";
import { ApiError } from "../http/errors";
import type { Security } from "./index";
import type { Role } from "./tokens";

export const roles = (security: Security) =>
  // Unnamed, so never deduplicated: a process may run several Cores, each with its own Security.
  new Elysia().macro({
    role: (needed: Role) => ({
      beforeHandle({ request }) {
        const refusal = security.forbidden(security.principals.get(request), needed);
        if (refusal) throw new ApiError(403, "forbidden", refusal);
      },
    }),
  });
