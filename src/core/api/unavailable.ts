/**
 * The REST side of the features that need the SQLite database, on PostgreSQL: each of their
 * paths answers 501 `not_implemented` naming the feature, rather than a bare 404 that reads
 * like a typo (docs/scale-out.md, "What is not done").
 */
import { Elysia } from "elysia";
import { notImplemented } from "./errors";

/** Feature name and the paths (each with everything under it) its routes serve. */
export const SQLITE_ONLY_ROUTES: Record<string, string[]> = {
};

export const unavailableApi = () => {
  const app = new Elysia({ name: "unavailable-on-postgres" });
  for (const [feature, paths] of Object.entries(SQLITE_ONLY_ROUTES)) {
    const answer = () => {
      throw notImplemented(`${feature}: not available on PostgreSQL yet (docs/scale-out.md)`);
    };
    for (const path of paths) app.all(path, answer, { detail: { hide: true } }).all(`${path}/*`, answer, { detail: { hide: true } });
  }
  return app;
};
