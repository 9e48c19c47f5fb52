/**
 * `GET /api/v1/whoami`: the token's name and role, so a client (the console) shows only what
 * the role may do: a read token sees no command buttons.
 */
import { Elysia } from "elysia";
import { ANONYMOUS, type Security } from ".";
import type { CoreContext, Feature } from "../context";
import { noQuery } from "../http/query";
import { WhoAmI } from "./schemas";

export const whoamiApi = (security: Security) =>
  new Elysia({ name: "whoami" }).get(
    "/api/v1/whoami",
    ({ request }) => {
      noQuery(request.url);
      const p = security.principals.get(request) ?? ANONYMOUS;
      return { name: p.name, role: p.role, auth_enabled: security.tokens.enabled };
    },
    { response: { 200: WhoAmI }, detail: { tags: ["Health"], summary: "Who the request's token is", description: "The name and role of the API token the request carries." } },
  );

/** Who a request's token is: part of the security layer, served like a feature. */
export const whoamiFeature = (ctx: Pick<CoreContext, "security">): Feature => ({ name: "whoami", routes: whoamiApi(ctx.security) });
