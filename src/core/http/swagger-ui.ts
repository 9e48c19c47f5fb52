/**
 * Swagger UI served from the swagger-ui-dist package, so it renders on a machine with no
 * internet access (@elysiajs/swagger's own page loads the UI from a CDN).
 */
import { Elysia } from "elysia";
import { dirname, join } from "node:path";

const DIST = dirname(require.resolve("swagger-ui-dist/package.json"));
const ASSETS = new Set(["swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "favicon-32x32.png"]);

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>HoneyBee Core API</title>
  <link rel="stylesheet" href="/swagger/assets/swagger-ui.css" />
  <link rel="icon" type="image/png" href="/swagger/assets/favicon-32x32.png" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/swagger/assets/swagger-ui-bundle.js"></script>
  <script>
    window.onload = () => {
      window.ui = SwaggerUIBundle({ url: "/swagger/json", dom_id: "#swagger-ui", deepLinking: true });
    };
  </script>
</body>
</html>`;

export const swaggerUi = () =>
  new Elysia({ name: "swagger-ui" })
    .get("/swagger", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), { detail: { hide: true } })
    .get(
      "/swagger/assets/:file",
      ({ params, set }) => {
        if (!ASSETS.has(params.file)) {
          set.status = 404;
          return new Response(JSON.stringify({ error: { code: "not_found", message: `no asset ${params.file}` } }), { status: 404, headers: { "content-type": "application/json" } });
        }
        return new Response(Bun.file(join(DIST, params.file)), { headers: { "cache-control": "public, max-age=86400" } });
      },
      { detail: { hide: true } },
    );
