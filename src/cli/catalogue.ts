/**
 * `honeybee catalogue [KIND]`: the honeypot kinds a node can install, and a kind's config keys.
 */
import type { Command } from "commander";
import type { CatalogueKind as CatalogueKindSchema } from "../modules/catalogue";
import { ApiError } from "./client";
import { action, withConnection } from "./command";
import { CliError } from "./errors";
import { renderFields, renderTable } from "./table";

export type CatalogueKind = typeof CatalogueKindSchema.static;
export interface CatalogueBody {
  kinds: CatalogueKind[];
  problems: { folder: string; message: string }[];
}

/**
 * The catalogue is read by people deciding what to install: its long descriptions wrap to the
 * terminal, or to 80 columns when the output is not a terminal, rather than being cut.
 */
export const CATALOGUE_WIDTH = 80;

export function catalogueTable(kinds: CatalogueKind[], width = CATALOGUE_WIDTH): string {
  if (kinds.length === 0) return "The catalogue has no honeypot kinds.";
  const table = renderTable(
    [
      { header: "KIND", value: (k: CatalogueKind) => k.name },
      { header: "ALIASES", value: (k) => k.aliases.join(", "), shrink: true, wrap: true },
      { header: "DESCRIPTION", value: (k) => k.description, shrink: true, wrap: true, min: 30 },
    ],
    kinds,
    width,
  );
  return `${table}\n\nConfig keys and events of a kind: honeybee catalogue KIND`;
}

export function kindDetail(k: CatalogueKind, width = CATALOGUE_WIDTH): string {
  const head = renderFields(
    [
      ["Kind", k.name],
      ["Aliases", k.aliases.join(", ") || "none"],
      ["Description", k.description],
    ],
    width,
  );
  const keys = Object.entries(k.config).map(([key, spec]) => ({ key, ...spec }));
  const config = keys.length
    ? renderTable(
        [
          { header: "CONFIG KEY", value: (c: (typeof keys)[number]) => c.key },
          { header: "DEFAULT", value: (c) => c.default, shrink: true, wrap: true, min: 16 },
          { header: "DESCRIPTION", value: (c) => c.description, shrink: true, wrap: true, min: 30 },
        ],
        keys,
        width,
      )
    : "No config keys.";
  const events = k.events.length ? renderFields([["Events", k.events.join(", ")]], width) : "";
  return [head, config, events].filter(Boolean).join("\n\n");
}

export function registerCatalogueCommand(program: Command): void {
  withConnection(
    program
      .command("catalogue")
      .alias("catalog")
      .description("list the honeypot kinds nodes can install, or show one kind's config keys")
      .argument("[kind]", "a kind's name or alias"),
  ).action(
    action(async (ctx, [wanted]) => {
      const body = await ctx.api.get<CatalogueBody>("/api/v1/catalogue").catch((e) => {
        if (e instanceof ApiError && e.status === 404) throw new CliError(`this Core at ${ctx.api.base} has no catalogue endpoint; upgrade Core`);
        throw e;
      });
      for (const p of body.problems) ctx.progress(`warning: catalogue folder ${p.folder} is unusable: ${p.message}`);
      if (wanted === undefined) {
        if (ctx.json) return ctx.printJson(body);
        return ctx.out(catalogueTable(body.kinds, ctx.width));
      }
      const w = wanted.toLowerCase();
      const kind = body.kinds.find((k) => k.name === w || k.aliases.some((a) => a.toLowerCase() === w));
      if (!kind) throw new CliError(`no honeypot kind ${JSON.stringify(wanted)} in the catalogue (kinds: ${body.kinds.map((k) => k.name).join(", ") || "none"})`);
      if (ctx.json) return ctx.printJson(kind);
      ctx.out(kindDetail(kind, ctx.width));
    }),
  );
}
