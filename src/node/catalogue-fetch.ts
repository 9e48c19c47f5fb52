/**
 * Gets a catalogue onto local disk: a directory is used where it is; a git repository is
 * cloned (`git clone --depth 1 [--branch B]`) into a temporary folder that the caller removes.
 *
 * Git runs through simple-git rather than a hand-made spawn: `git_url` arrives from the
 * network (InstallPot), and simple-git passes it as a pathspec (a URL starting with `-` cannot
 * become an option), refuses unsafe protocols and environment (`ext::`, GIT_SSH_COMMAND), and
 * kills a git that stops making progress. GIT_TERMINAL_PROMPT=0 makes a private repository
 * fail at once instead of waiting for a password nobody will type.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { simpleGit } from "simple-git";
import { catalogueDigest, loadCatalogue } from "../catalogue/loader";
import { BUILTIN_CATALOGUE } from "../catalogue/paths";
import { lastLines } from "./output";

export interface CatalogueSource {
  /** A directory, or anything `git clone` understands (URL, scp-like address, local repository). */
  location: string;
  branch?: string;
  /** Clone even when `location` is a local directory (InstallPot's git_url always clones). */
  forceGit?: boolean;
}

export interface FetchedCatalogue {
  dir: string;
  /** For messages and the pot record: where the kind came from. */
  label: string;
  cleanup(): void;
}

export class CatalogueUnreachable extends Error {
  override name = "CatalogueUnreachable";
}

/** URL schemes, scp-like `user@host:path`, or a path ending in `.git` mean a git repository. */
export function looksLikeGit(location: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(location) || /^[^/\s]+@[^/\s]+:/.test(location) || /\.git\/?$/.test(location);
}

/** The node's default catalogue, with InstallPot's git_url / git_branch applied. */
export function chooseSource(nodeDefault: { catalogue: string; catalogue_branch: string }, gitUrl?: string, gitBranch?: string): CatalogueSource {
  if (gitUrl) return { location: gitUrl, branch: gitBranch, forceGit: true };
  const location = nodeDefault.catalogue || BUILTIN_CATALOGUE;
  return { location, branch: gitBranch ?? (nodeDefault.catalogue_branch || undefined) };
}

/**
 * The fingerprint of the node's default catalogue, for NodeRegistration: read where it lies
 * when it is a directory (the built-in one included), at each registration so that a kind added
 * since counts. A git catalogue is only cloned for an install: undefined, as when it cannot be read.
 */
export function defaultCatalogueDigest(nodeDefault: { catalogue: string; catalogue_branch: string }): string | undefined {
  const source = chooseSource(nodeDefault);
  if (source.branch || looksLikeGit(source.location)) return undefined;
  try {
    return catalogueDigest(loadCatalogue(resolve(source.location)));
  } catch {
    return undefined;
  }
}

export async function fetchCatalogue(source: CatalogueSource, workDir: string, timeoutMs: number, signal?: AbortSignal): Promise<FetchedCatalogue> {
  const isDir = !looksLikeGit(source.location) && existsSync(source.location) && statSync(source.location).isDirectory();
  if (isDir && !source.forceGit) {
    if (source.branch) throw new CatalogueUnreachable(`git_branch ${source.branch} needs a git catalogue, but ${source.location} is a directory; send git_url too`);
    return { dir: resolve(source.location), label: resolve(source.location), cleanup: () => {} };
  }
  if (!isDir && !source.forceGit && !looksLikeGit(source.location)) throw new CatalogueUnreachable(`catalogue ${source.location} is neither a directory nor a git URL`);
  mkdirSync(workDir, { recursive: true });
  const tmp = mkdtempSync(join(workDir, "clone-"));
  const cleanup = () => rmSync(tmp, { recursive: true, force: true });
  const dest = join(tmp, "catalogue");
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const onAbort = () => abort.abort();
  signal?.addEventListener("abort", onAbort);
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", GIT_TERMINAL_PROMPT: "0" };
  for (const key of ["HOME", "LANG", "GIT_SSL_CAINFO", "SSL_CERT_FILE", "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"]) {
    if (process.env[key]) env[key] = process.env[key]!;
  }
  try {
    const git = simpleGit({ baseDir: tmp, abort: abort.signal, timeout: { block: timeoutMs }, allowEnvironment: ["GIT_TERMINAL_PROMPT", "GIT_SSL_CAINFO"] }).env(env);
    await git.clone(source.location, dest, ["--depth", "1", ...(source.branch ? ["--branch", source.branch] : [])]);
  } catch (e) {
    cleanup();
    const why = signal?.aborted ? "the node is shutting down" : abort.signal.aborted ? `git clone did not finish within ${Math.round(timeoutMs / 1000)} s` : lastLines((e as Error).message, 4);
    throw new CatalogueUnreachable(`catalogue ${source.location}${source.branch ? ` (branch ${source.branch})` : ""} is unreachable: ${why}`);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener("abort", onAbort);
  }
  return { dir: dest, label: source.branch ? `${source.location}#${source.branch}` : source.location, cleanup };
}
