/**
 * A router for the console's real URLs: history.pushState on in-page links, the current path
 * as state. Every console URL is also served by Core, so a reload lands on the same page.
 */
import { useEffect, useState } from "preact/hooks";

const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
  if (!replace) window.scrollTo(0, 0);
}

addEventListener("popstate", () => {
  for (const l of listeners) l();
});

// In-page links navigate without a reload; modified clicks (new tab) and other origins do not.
addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = (e.target as Element).closest?.("a");
  if (!a || a.target || a.hasAttribute("download") || a.origin !== location.origin) return;
  if (a.pathname.startsWith("/swagger") || a.pathname.startsWith("/api/")) return;
  e.preventDefault();
  navigate(a.pathname + a.search);
});

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const l = () => setTick((n) => n + 1);
    listeners.add(l);
    return () => listeners.delete(l);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}
