import { useEffect, useState } from "react";
import { isConsoleView, type ConsoleView } from "./console/views";

/** Every view has a URL under /ui/, so a reload or a shared link keeps it. */
export const BASE = "/ui";

export type Route =
  | { view: "overview" }
  | { view: "runs"; query: URLSearchParams }
  | { view: "run"; runId: string }
  | { view: "human-requests" }
  | { view: "workers" }
  | { view: "costs"; query: URLSearchParams }
  | { view: ConsoleView }
  | { view: "missing"; path: string };

export function parseRoute(pathname: string, search: string): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = path.split("/").filter(Boolean);
  if (parts.length === 0) return { view: "overview" };
  if (parts[0] === "runs" && parts.length === 1) return { view: "runs", query: new URLSearchParams(search) };
  if (parts[0] === "runs" && parts.length === 2) return { view: "run", runId: decodeURIComponent(parts[1]!) };
  if (parts[0] === "human-requests" && parts.length === 1) return { view: "human-requests" };
  // The page's older address, kept so bookmarks and links keep working.
  if (parts[0] === "inbox" && parts.length === 1) return { view: "human-requests" };
  if (parts[0] === "workers" && parts.length === 1) return { view: "workers" };
  if (parts[0] === "costs" && parts.length === 1) return { view: "costs", query: new URLSearchParams(search) };
  if (parts.length === 1 && isConsoleView(parts[0])) return { view: parts[0] };
  return { view: "missing", path };
}

export function runPath(runId: string): string {
  return `${BASE}/runs/${encodeURIComponent(runId)}`;
}

/** Client-side navigation: pushes the URL and tells {@link useRoute}. */
export function navigate(to: string, replace = false): void {
  if (to === window.location.pathname + window.location.search) return;
  if (replace) window.history.replaceState(null, "", to);
  else window.history.pushState(null, "", to);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export function useRoute(): Route {
  const read = () => parseRoute(window.location.pathname, window.location.search);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onPop = () => setRoute(read());
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  return route;
}
