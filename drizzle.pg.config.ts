import { defineConfig } from "drizzle-kit";

/** Migrations of the PostgreSQL store (src/db/pg/), apart from SQLite's (drizzle.config.ts). */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/pg/schema.ts",
  out: "./drizzle/pg",
});
