import { useEffect, useState } from "preact/hooks";

/** The console's pages: `/` the runs list, `/runs/<id>` a run, `/pools` the pool hosts. */
export type Route =
  | { page: "list" }
  | { page: "pools" }
  | { page: "run"; runId: string }
  | { page: "unknown"; path: string };

export function parseRoute(pathname: string): Route {
  if (pathname === "/" || pathname === "") return { page: "list" };
  if (pathname === "/pools" || pathname === "/pools/") return { page: "pools" };
  const match = /^\/runs\/([^/]+)\/?$/.exec(pathname);
  if (match?.[1]) {
    try {
      return { page: "run", runId: decodeURIComponent(match[1]) };
    } catch {
      return { page: "unknown", path: pathname };
    }
  }
  return { page: "unknown", path: pathname };
}

export const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

const NAVIGATED = "console:navigated";

/** Client-side navigation; the worker's assets answer index.html for any console path. */
export function navigate(url: string): void {
  history.pushState(null, "", url);
  window.dispatchEvent(new Event(NAVIGATED));
  window.scrollTo(0, 0);
}

/** A link click the console handles itself (plain left click, no modifier, same origin). */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = (event.currentTarget as HTMLAnchorElement | null) ?? null;
  if (!anchor || anchor.origin !== location.origin || anchor.target) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search + anchor.hash);
}

/** The current location, re-read on navigation, back/forward and fragment changes. */
export function useLocation(): { route: Route; hash: string } {
  const read = () => ({ route: parseRoute(location.pathname), hash: location.hash });
  const [state, setState] = useState(read);
  useEffect(() => {
    const update = () => setState(read());
    window.addEventListener("popstate", update);
    window.addEventListener("hashchange", update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener("hashchange", update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return state;
}

/** Replaces the fragment without a history entry (hashchange is not fired, so tell listeners). */
export function replaceFragment(fragment: string): void {
  history.replaceState(null, "", location.pathname + location.search + fragment);
  window.dispatchEvent(new Event(NAVIGATED));
}
