/**
 * A honeypot kind in a catalogue: a folder holding `manifest.json` (this schema) and whatever
 * the kind needs. Commands are argv arrays (never a shell line), so config values cannot inject
 * into them. In `entry` and `install`, `${BUN}` is the running Bun executable, `${HONEYBEE_HOME}`
 * the installed honeybee package, and `${POT_DIR}` the pot's folder on the node (the cwd).
 */
import { Type, type Static } from "@sinclair/typebox";

export const ConfigKey = Type.Object({
  default: Type.String(),
  description: Type.String(),
  /** A port key is checked to be 1-65535 and free before the pot starts. */
  port: Type.Optional(Type.Boolean()),
  /** A path key must stay inside the pot's folder: relative, no `..` that climbs out of it. */
  path: Type.Optional(Type.Boolean()),
  /** JSON Schema fragment for the string value (pattern, enum, maxLength). */
  schema: Type.Optional(Type.Record(Type.String(), Type.Any())),
});
export type ConfigKey = Static<typeof ConfigKey>;

/**
 * A table of a kind's dashboard: the most frequent values of one field (or a combination, like
 * `username,password`) of one event type (or every type a `<prefix>.*` starts), as
 * `GET /api/v1/stats/top` counts them. The console draws one per entry.
 */
export const DashboardEntry = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 60, examples: ["URLs"] }),
  event_type: Type.String({ pattern: "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*(\\.\\*)?$", examples: ["web.request", "cowrie.login.*"] }),
  field: Type.String({ pattern: "^[^.,]+(\\.[^.,]+)*(,[^.,]+(\\.[^.,]+)*){0,3}$", examples: ["path", "username,password"] }),
});
export type DashboardEntry = Static<typeof DashboardEntry>;

export const Manifest = Type.Object({
  name: Type.String({ pattern: "^[a-z0-9][a-z0-9_-]*$", examples: ["cowrie"] }),
  aliases: Type.Array(Type.String(), { default: [] }),
  description: Type.String(),
  version: Type.Optional(Type.String()),
  /** argv that runs the honeypot in the foreground; it must exit on SIGTERM. */
  entry: Type.Array(Type.String(), { minItems: 1 }),
  /** argv lists run once at install, in order, each with a time limit. */
  install: Type.Array(Type.Array(Type.String(), { minItems: 1 }), { default: [] }),
  config: Type.Record(Type.String({ pattern: "^[a-z][a-z0-9_]*$" }), ConfigKey),
  /** Event ids the kind emits, for documentation. */
  events: Type.Optional(Type.Array(Type.String())),
  /** What the kind records worth a top list on its dashboard (the console's kind, pot and node pages). */
  dashboard: Type.Optional(Type.Array(DashboardEntry, { maxItems: 24 })),
});
export type Manifest = Static<typeof Manifest>;
