/**
 * Reads a catalogue directory: one folder per honeypot kind, each with a `manifest.json`.
 *
 * Pure apart from reading files, so Core can serve the built-in catalogue (`GET
 * /api/v1/catalogue`) with the same code the node installs from. A broken manifest does not
 * hide the good ones: it is returned in `problems`, named by its folder.
 */
import { Value } from "@sinclair/typebox/value";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Manifest } from "./manifest";

export interface CatalogueKind {
  manifest: Manifest;
  /** Absolute folder of the kind: what gets copied into a pot's folder. */
  dir: string;
}

export interface Catalogue {
  kinds: CatalogueKind[];
  /** Folders that hold a manifest.json that could not be used, with the reason. */
  problems: { folder: string; message: string }[];
}

export class CatalogueError extends Error {
  override name = "CatalogueError";
}

export function loadCatalogue(root: string): Catalogue {
  if (!existsSync(root) || !statSync(root).isDirectory()) throw new CatalogueError(`catalogue ${root} is not a directory`);
  const kinds: CatalogueKind[] = [];
  const problems: Catalogue["problems"] = [];
  const claimed = new Map<string, string>();
  for (const folder of readdirSync(root).sort()) {
    if (folder.startsWith(".")) continue;
    const dir = join(root, folder);
    const file = join(dir, "manifest.json");
    if (!statSync(dir).isDirectory() || !existsSync(file)) continue;
    const parsed = parseManifest(readFileSync(file, "utf8"));
    if (typeof parsed === "string") {
      problems.push({ folder, message: parsed });
      continue;
    }
    // Names and aliases share one namespace; a clash would make InstallPot ambiguous.
    const names = [parsed.name, ...parsed.aliases].map((n) => n.toLowerCase());
    const clash = names.find((n) => claimed.has(n));
    if (clash) {
      problems.push({ folder, message: `name or alias "${clash}" is already used by kind ${claimed.get(clash)}` });
      continue;
    }
    for (const n of names) claimed.set(n, parsed.name);
    kinds.push({ manifest: parsed, dir });
  }
  return { kinds, problems };
}

/** Validates one manifest's text; returns the manifest or a reason it cannot be used. */
export function parseManifest(text: string): Manifest | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return `manifest.json is not valid JSON: ${(e as Error).message}`;
  }
  const value = Value.Default(Manifest, Value.Clone(raw));
  if (!Value.Check(Manifest, value)) {
    const first = Value.Errors(Manifest, value).First();
    return `manifest.json is invalid at ${first?.path || "/"}: ${first?.message ?? "does not match the schema"}`;
  }
  for (const [key, spec] of Object.entries(value.config)) {
    if (spec.port && !isPortString(spec.default)) return `config key ${key} is a port but its default ${JSON.stringify(spec.default)} is not a number from 1 to 65535`;
  }
  return value;
}

/**
 * A fingerprint of a catalogue's kinds: equal fingerprints mean equal manifests, so that whoever
 * holds one copy (Core, its built-in catalogue) can check an InstallPot exactly as a node with
 * the other would. A node advertises its own in NodeRegistration `catalogue`.
 */
export function catalogueDigest(catalogue: Catalogue): string {
  const manifests = catalogue.kinds.map((k) => k.manifest).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return `sha256:${new Bun.CryptoHasher("sha256").update(JSON.stringify(manifests)).digest("hex")}`;
}

/** Finds a kind by its name or one of its aliases, ignoring case. */
export function findKind(catalogue: Catalogue, name: string): CatalogueKind | null {
  const wanted = name.toLowerCase();
  return catalogue.kinds.find((k) => k.manifest.name === wanted || k.manifest.aliases.some((a) => a.toLowerCase() === wanted)) ?? null;
}

/** "cowrie (ssh-telnet), honnypotter (http-login)": for messages that list what exists. */
export function describeKinds(catalogue: Catalogue): string {
  if (catalogue.kinds.length === 0) return "none";
  return catalogue.kinds.map((k) => (k.manifest.aliases.length ? `${k.manifest.name} (${k.manifest.aliases.join(", ")})` : k.manifest.name)).join(", ");
}

export function isPortString(value: string): boolean {
  if (!/^\d{1,5}$/.test(value)) return false;
  const n = Number(value);
  return n >= 1 && n <= 65535;
}

/** The catalogue as Core shows it over REST: manifests without local paths. */
export function catalogueSummary(catalogue: Catalogue): Manifest[] {
  return catalogue.kinds.map((k) => k.manifest);
}
