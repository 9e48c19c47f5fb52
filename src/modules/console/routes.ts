/**
 * Serves the operator's console on the REST port (docs/console.md): index.html for every
 * console page, the bundle's files under /console/, gzip when the browser takes it.
 */
import { Elysia } from "elysia";
import type { Logger } from "../../log";
import { consoleBundle, type ConsoleFile } from "./build";
import { CONSOLE_PAGES, CONSOLE_PAGE_PREFIXES } from "../../core/http/console-pages";

export { isConsolePath } from "../../core/http/console-pages";

function send(file: ConsoleFile, request: Request, headers: Record<string, string>): Response {
  const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  const h: Record<string, string> = { "content-type": file.type, vary: "accept-encoding", "x-content-type-options": "nosniff", ...headers };
  if (gzip) h["content-encoding"] = "gzip";
  return new Response(gzip ? file.gzip : file.body, { headers: h });
}

export const consoleApi = (logger: Logger) => {
  let logged = false;
  const failed = (e: unknown) => {
    if (!logged) logger.error({ err: e }, "the console could not be built");
    logged = true;
    return new Response(JSON.stringify({ error: { code: "console_unavailable", message: "the console could not be built; see Core's log" } }), {
      status: 500,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  };
  const page = async ({ request }: { request: Request }) => {
    try {
      const b = await consoleBundle();
      return send(b.index, request, { "cache-control": "no-cache", "content-security-policy": b.csp, "referrer-policy": "no-referrer", "x-frame-options": "DENY" });
    } catch (e) {
      return failed(e);
    }
  };
  const app = new Elysia({ name: "console" });
  for (const p of CONSOLE_PAGES) app.get(p, page, { detail: { hide: true } });
  for (const p of CONSOLE_PAGE_PREFIXES) app.get(`${p}:id`, page, { detail: { hide: true } });
  return app.get(
    "/console/:file",
    async ({ params, request }) => {
      let b: Awaited<ReturnType<typeof consoleBundle>>;
      try {
        b = await consoleBundle();
      } catch (e) {
        return failed(e);
      }
      const f = b.files.get(params.file);
      if (!f) return new Response(JSON.stringify({ error: { code: "not_found", message: `no console file ${params.file}` } }), { status: 404, headers: { "content-type": "application/json; charset=utf-8" } });
      // Names carry the content's hash: a new build has new names.
      return send(f, request, { "cache-control": "public, max-age=31536000, immutable" });
    },
    { detail: { hide: true } },
  );
};
