/**
 * The built-in honeypot catalogue: the kinds a node can install with InstallPot, read with the
 * same loader the node agent installs from.
 */
import { Elysia, t } from "elysia";
import { existsSync } from "node:fs";
import { loadCatalogue } from "../../catalogue/loader";
import { BUILTIN_CATALOGUE } from "../../catalogue/paths";
import { errorResponses } from "../../core/http/errors";
import { noQuery } from "../../core/http/query";
import { CatalogueKind } from "./schemas";

export const catalogueApi = (root = BUILTIN_CATALOGUE) =>
  new Elysia({ name: "catalogue", tags: ["Catalogue"] }).get(
    "/api/v1/catalogue",
    ({ request }) => {
      noQuery(request.url);
      // Read on each request: it is small, and an operator may add a kind without a restart.
      const cat = existsSync(root) ? loadCatalogue(root) : { kinds: [], problems: [] };
      return {
        kinds: cat.kinds.map(({ manifest: m }) => ({
          name: m.name,
          aliases: m.aliases,
          description: m.description,
          config: Object.fromEntries(Object.entries(m.config).map(([k, v]) => [k, { default: v.default, description: v.description, port: v.port ?? false }])),
          events: m.events ?? [],
          dashboard: m.dashboard ?? [],
        })),
        problems: cat.problems,
      };
    },
    {
      response: {
        200: t.Object({ kinds: t.Array(CatalogueKind), problems: t.Array(t.Object({ folder: t.String(), message: t.String() })) }),
        ...errorResponses({ 400: ["bad_request", 'unknown query parameter "kind"; it takes none'] }),
      },
      detail: { summary: "List the honeypot kinds of the built-in catalogue", description: "Use a kind's name or alias as InstallPot's honeypot_type." },
    },
  );
