/**
 * Whether InstallPot may clone a `git_url`, and what exactly to clone.
 *
 * A git_url makes the node run software from that repository, so only the node's own
 * catalogue and the prefixes its operator listed in `git_allow` are accepted. Text prefixes
 * are not enough: `file:///srv/allowed/../evil.git` starts with `file:///srv/allowed` and names
 * a repository outside it, and `%2e%2e` is the same `..` once git decodes it. So both sides
 * are parsed and normalised first (scheme, user and host exact; the path's `.` and `..`
 * resolved and its escapes decoded), a prefix matches whole path segments only
 * (`/srv/allowed` does not allow `/srv/allowed-evil`), and the node then clones the normalised
 * URL, never the text it was sent, so what was checked is what is fetched.
 */
interface Normalised {
  /** Everything before the path: `https://user@host:8443`, `file://`, `local`, `scp:git@host:`. */
  origin: string;
  segments: string[];
  /** The normalised location, as given to git. */
  text: string;
}

/** The repository to clone for `gitUrl`, or null when this node does not allow it. */
export function allowedGitUrl(gitUrl: string, nodeCatalogue: string, allow: readonly string[]): string | null {
  if (gitUrl === nodeCatalogue && nodeCatalogue !== "") return gitUrl;
  const url = normaliseGitLocation(gitUrl);
  if (!url) return null;
  for (const prefix of allow) {
    const p = prefix.trim() === "" ? null : normaliseGitLocation(prefix.trim());
    if (p && p.origin === url.origin && p.segments.length <= url.segments.length && p.segments.every((s, i) => s === url.segments[i])) return url.text;
  }
  return null;
}


const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const SCP = /^([^/\s@]+@)?([^/\s:@]+):(.*)$/;

/**
 * Parses a git location (URL, absolute local path or scp-like `user@host:path`) into a
 * comparable form; null for what cannot be compared safely (relative paths, queries,
 * fragments, an escaped `/`, a `..` that climbs above the root, control characters).
 */
export function normaliseGitLocation(location: string): Normalised | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (location === "" || /[\x00-\x1f\x7f]/.test(location)) return null;
  if (SCHEME.test(location)) {
    let url: URL;
    try {
      url = new URL(location);
    } catch {
      return null;
    }
    if (url.search || url.hash || location.includes("?") || location.includes("#")) return null;
    const segments: string[] = [];
    for (const raw of url.pathname.split("/")) {
      if (raw === "") continue;
      let s: string;
      try {
        s = decodeURIComponent(raw);
      } catch {
        return null;
      }
      // URL has resolved `..` and `%2e%2e` already; whatever still decodes to a dot segment, a
      // separator or another escape was encoded twice or hides a path, and a tool that decodes
      // once more would read it as one.
      if (s === "." || s === ".." || /[/\\%\0]/.test(s)) return null;
      segments.push(s);
    }
    const user = url.username ? `${url.username}@` : "";
    const origin = `${url.protocol}//${user}${url.host}`;
    return { origin, segments, text: `${origin}/${segments.map(encodeURIComponent).join("/")}` };
  }
  if (location.startsWith("/")) {
    const segments = splitResolved(location, true);
    return segments && { origin: "local", segments, text: "/" + segments.join("/") };
  }
  const scp = SCP.exec(location);
  if (scp) {
    const path = scp[3]!;
    const absolute = path.startsWith("/");
    const segments = splitResolved(path, absolute);
    const origin = `scp:${scp[1] ?? ""}${scp[2]!.toLowerCase()}:${absolute ? "/" : ""}`;
    return segments && { origin, segments, text: `${scp[1] ?? ""}${scp[2]!.toLowerCase()}:${absolute ? "/" : ""}${segments.join("/")}` };
  }
  return null;
}

/** Path segments with `.` and `..` resolved; null when `..` would climb above the start. */
function splitResolved(path: string, absolute: boolean): string[] | null {
  const out: string[] = [];
  for (const s of path.split("/")) {
    if (s === "" || s === ".") continue;
    if (s === "..") {
      if (out.length === 0) return absolute ? out : null;
      out.pop();
    } else out.push(s);
  }
  return out.length === 0 && !absolute ? null : out;
}
