/**
 * The operator's console (docs/console.md): a Preact single-page app on Core's REST port.
 * It signs in when Core asks for a token, then routes each real URL to its page.
 */
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, authListeners, get, token, type Me } from "./api";
import { MeContext } from "./components";
import { ArtifactPage, ArtifactsPage } from "./pages/artifacts";
import { AttackerPage } from "./pages/attacker";
import { KindPage, PotPage } from "./pages/dashboard";
import { EventsPage } from "./pages/events";
import { LivePage } from "./pages/live";
import { MapPage } from "./pages/map";
import { NodePage, NodesPage } from "./pages/nodes";
import { OverviewPage } from "./pages/overview";
import { SessionPage, SessionsPage } from "./pages/sessions";
import { SettingsPage } from "./pages/settings";
import { SignIn } from "./pages/signin";
import { navigate, useLocation } from "./router";
import "./style.css";

const NAV: [string, string][] = [
  ["/", "Overview"],
  ["/live", "Live"],
  ["/events", "Events"],
  ["/sessions", "Sessions"],
  ["/artifacts", "Artifacts"],
  ["/map", "Map"],
  ["/nodes", "Nodes"],
  ["/settings", "Settings"],
];

function Page({ path, query }: { path: string; query: URLSearchParams }) {
  const param = (prefix: string) => (path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : null);
  if (path === "/") return <OverviewPage query={query} />;
  if (path === "/live") return <LivePage />;
  if (path === "/events") return <EventsPage query={query} />;
  if (path === "/sessions") return <SessionsPage query={query} />;
  if (path === "/artifacts") return <ArtifactsPage query={query} />;
  if (path === "/map") return <MapPage query={query} />;
  if (path === "/nodes") return <NodesPage />;
  if (path === "/settings") return <SettingsPage />;
  const node = param("/nodes/");
  if (node) return <NodePage id={node} query={query} />;
  const kind = param("/kinds/");
  if (kind) return <KindPage kind={kind} query={query} />;
  const pot = param("/pots/");
  if (pot) return <PotPage potId={pot} query={query} />;
  const ip = param("/attackers/");
  if (ip) return <AttackerPage ip={ip} />;
  const artifact = param("/artifacts/");
  if (artifact) return <ArtifactPage sha256={artifact} />;
  const session = param("/sessions/");
  if (session) return <SessionPage id={session} />;
  return (
    <main id="main">
      <h1>Not found</h1>
      <p>
        No console page at <code>{path}</code>. <a href="/">Overview</a>
      </p>
    </main>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState(() => document.documentElement.dataset.theme ?? "");
  const next = theme === "" ? "dark" : theme === "dark" ? "light" : "";
  const label = theme === "" ? "Theme: system" : theme === "dark" ? "Theme: dark" : "Theme: light";
  return (
    <button
      type="button"
      class="ghost"
      title="Switch between the system's colours, dark and light"
      onClick={() => {
        if (next) document.documentElement.dataset.theme = next;
        else delete document.documentElement.dataset.theme;
        try {
          if (next) localStorage.setItem("honeybee.theme", next);
          else localStorage.removeItem("honeybee.theme");
        } catch {}
        setTheme(next);
        // Charts read their colours from CSS variables when they are drawn.
        dispatchEvent(new Event("themechange"));
      }}
    >
      {label}
    </button>
  );
}

function App() {
  const { path, query } = useLocation();
  const [me, setMe] = useState<Me | null>(null);
  const [needToken, setNeedToken] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [menu, setMenu] = useState(false);

  const check = () =>
    get<Me>("/api/v1/whoami").then(
      (m) => {
        setMe(m);
        setNeedToken(false);
      },
      (e) => {
        if (e instanceof ApiError && e.status === 401) setNeedToken(true);
        else setError(e.message);
      },
    );
  useEffect(() => {
    check();
    const l = () => setNeedToken(true);
    authListeners.add(l);
    return () => authListeners.delete(l);
  }, []);
  useEffect(() => setMenu(false), [path]);

  if (needToken || path === "/signin") {
    return (
      <SignIn
        onSignedIn={() => {
          check();
          if (path === "/signin") navigate(query.get("next") ?? "/", true);
        }}
        failed={needToken && token.get() !== null}
      />
    );
  }
  if (!me) return <p class="loading">{error ? `Core does not answer: ${error}` : "Connecting to Core…"}</p>;
  const active = (href: string) => (href === "/" ? path === "/" : path === href || path.startsWith(href + "/") || (href === "/events" && path.startsWith("/attackers/")) || (href === "/nodes" && /^\/(kinds|pots)\//.test(path)));
  return (
    <MeContext.Provider value={me}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top-bar">
        <a class="brand" href="/">
          <span aria-hidden="true">⬢</span> HoneyBee
        </a>
        <button type="button" class="ghost menu-btn" aria-expanded={menu} aria-controls="nav" onClick={() => setMenu(!menu)}>
          Menu
        </button>
        <nav id="nav" class={menu ? "open" : ""} aria-label="Console">
          {NAV.map(([href, label]) => (
            <a key={href} href={href} aria-current={active(href) ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span class="muted" title={me.auth_enabled ? "The token you signed in with" : "Core checks no tokens (loopback only)"}>
            {me.auth_enabled ? `${me.name} (${me.role})` : "no sign-in"}
          </span>
          <ThemeToggle />
          {me.auth_enabled && (
            <button
              type="button"
              class="ghost"
              onClick={() => {
                token.clear();
                setMe(null);
                setNeedToken(true);
              }}
            >
              Sign out
            </button>
          )}
        </div>
      </header>
      <Page path={path} query={query} />
    </MeContext.Provider>
  );
}

render(<App />, document.getElementById("app")!);
