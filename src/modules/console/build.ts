/**
 * Builds the console (src/console/) with Bun's bundler, in memory, the first time a page is
 * asked for: nothing to run before `npm start`, nothing on disk to go stale, and Core never
 * pays for it unless somebody opens the console. Every file is kept with its gzip form, which
 * is what browsers download.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

export const CONSOLE_SRC = join(import.meta.dir, "..", "..", "console");

export interface ConsoleFile {
  body: Uint8Array;
  gzip: Uint8Array;
  type: string;
}

export interface ConsoleBundle {
  index: ConsoleFile;
  /** Assets by file name (`main-1a2b3c.js`), served under /console/. */
  files: Map<string, ConsoleFile>;
  /** The Content-Security-Policy of the page: its own scripts and Core only. */
  csp: string;
  /** What a first visit downloads (index.html, the entry script, its static imports, CSS), gzip bytes. */
  firstLoadGzipBytes: number;
}

// Runs before the stylesheet applies, so a dark-mode operator never sees a white flash.
const THEME_SCRIPT = `try{var t=localStorage.getItem("honeybee.theme");if(t)document.documentElement.dataset.theme=t}catch(e){}`;

const file = (body: Uint8Array, type: string): ConsoleFile => ({ body, gzip: Bun.gzipSync(body as Uint8Array<ArrayBuffer>, { level: 9 }), type });

async function build(): Promise<ConsoleBundle> {
  const out = await Bun.build({
    entrypoints: [join(CONSOLE_SRC, "main.tsx")],
    target: "browser",
    minify: true,
    splitting: true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!out.success) throw new Error(`the console does not build: ${out.logs.map(String).join("; ")}`);
  const files = new Map<string, ConsoleFile>();
  let entry = "";
  const css: string[] = [];
  for (const a of out.outputs) {
    const name = a.path.replace(/^.*\//, "");
    files.set(name, file(new Uint8Array(await a.arrayBuffer()), a.type));
    if (a.kind === "entry-point" && name.endsWith(".js")) entry = name;
    else if (name.endsWith(".css")) css.push(name);
  }
  // The tab's icon: an SVG (a bee on a honeycomb cell), named by its content like the rest.
  const iconBody = new Uint8Array(await Bun.file(join(CONSOLE_SRC, "favicon.svg")).arrayBuffer());
  const icon = `favicon-${createHash("sha256").update(iconBody).digest("hex").slice(0, 8)}.svg`;
  files.set(icon, file(iconBody, "image/svg+xml"));
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="dark light">
<title>HoneyBee Core</title>
<link rel="icon" type="image/svg+xml" href="/console/${icon}">
<script>${THEME_SCRIPT}</script>
${css.map((c) => `<link rel="stylesheet" href="/console/${c}">`).join("\n")}
<script type="module" src="/console/${entry}"></script>
</head>
<body><div id="app"></div><noscript>The HoneyBee console needs JavaScript; the API is at <a href="/swagger">/swagger</a>.</noscript></body>
</html>
`;
  const index = file(new TextEncoder().encode(html), "text/html; charset=utf-8");
  const hash = createHash("sha256").update(THEME_SCRIPT).digest("base64");
  // 'wasm-unsafe-eval': the session page's terminal player (asciinema-player) runs its terminal
  // emulator as WebAssembly compiled from bytes in its own script; it allows no eval of JS.
  const csp = `default-src 'self'; script-src 'self' 'sha256-${hash}' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`;
  const entryText = new TextDecoder().decode(files.get(entry)!.body);
  // Static imports of the entry load with it; dynamic ones (import()) load when their page opens.
  const firstLoad = [entry, ...css, icon, ...[...entryText.matchAll(/from"\.\/([^"]+\.js)"/g)].map((m) => m[1]!)];
  const firstLoadGzipBytes = index.gzip.length + [...new Set(firstLoad)].reduce((n, f) => n + (files.get(f)?.gzip.length ?? 0), 0);
  return { index, files, csp, firstLoadGzipBytes };
}

let pending: Promise<ConsoleBundle> | null = null;

/** The console, built once per process (again after a failed build, so a fix shows on reload). */
export function consoleBundle(): Promise<ConsoleBundle> {
  return (pending ??= build().catch((e) => {
    pending = null;
    throw e;
  }));
}
