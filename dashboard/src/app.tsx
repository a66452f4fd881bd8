import { useEffect, useRef } from "react";
import { forgetToken, useAuth } from "./api";
import { Link } from "./components/link";
import { TokenPanel } from "./components/token-panel";
import { CostsPage } from "./pages/costs";
import { InboxPage } from "./pages/inbox";
import { OverviewPage } from "./pages/overview";
import { RunPage } from "./pages/run";
import { RunsPage } from "./pages/runs";
import { WorkersPage } from "./pages/workers";
import { ConsolePage } from "./console/console-page";
import { isConsoleView } from "./console/views";
import { BASE, useRoute, type Route } from "./router";
import { setZoneMode, useZoneMode, zoneLabel } from "./format";

const NAV = [
  { href: `${BASE}/`, label: "Overview", view: "overview" },
  { href: `${BASE}/runs`, label: "Runs", view: "runs" },
  { href: `${BASE}/human-requests`, label: "Human requests", view: "human-requests" },
  { href: `${BASE}/workers`, label: "Workers", view: "workers" },
  { href: `${BASE}/costs`, label: "Costs", view: "costs" },
  { href: `${BASE}/schedules`, label: "Operate", view: "operate" },
] as const;

export function App() {
  const route = useRoute();
  const auth = useAuth();
  // Subscribed here so every time on every page is written again when the zone is switched.
  const zone = useZoneMode();
  const first = useRef(true);
  useEffect(() => {
    document.title = `${title(route)} · Cairn`;
    // After a client-side navigation, focus goes to the new page's heading, as a page load would read it.
    if (first.current) {
      first.current = false;
      return;
    }
    return focusHeading();
  }, [route]);
  const active = route.view === "run" ? "runs" : isConsoleView(route.view) ? "operate" : route.view;
  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <nav className="top" aria-label="main">
        <Link href={`${BASE}/`} className="brand">
          ◭ Cairn
        </Link>
        {NAV.map((item) => (
          <Link key={item.view} href={item.href} className={active === item.view ? "active" : ""} aria-current={active === item.view ? "page" : undefined}>
            {item.label}
          </Link>
        ))}
        <button
          className="nav-button right zone-toggle"
          onClick={() => setZoneMode(zone === "utc" ? "local" : "utc")}
          title={`Times are shown in ${zone === "utc" ? "UTC" : `local time (${zoneLabel()})`}; switch to ${zone === "utc" ? "local time" : "UTC"}`}
          data-zone={zone}
        >
          Times: {zone === "utc" ? "UTC" : `local (${zoneLabel()})`}
        </button>
        <a className="muted" href="/openapi.json" target="_blank" rel="noreferrer">
          API
        </a>
        {auth.token && (
          <button className="nav-button" onClick={forgetToken} title="Drop the API token this tab uses">
            Forget token
          </button>
        )}
      </nav>
      <main id="main" tabIndex={-1}>
        {/* Without a usable token nothing loads: one panel that says how to get in, not an error per panel. */}
        {auth.problem ? <TokenPanel problem={auth.problem} token={auth.token} /> : <Page key={auth.epoch} route={route} />}
      </main>
    </div>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.view) {
    case "overview":
      return <OverviewPage />;
    case "runs":
      return <RunsPage query={route.query} />;
    case "run":
      return <RunPage key={route.runId} runId={route.runId} />;
    case "human-requests":
      return <InboxPage />;
    case "workers":
      return <WorkersPage />;
    case "costs":
      return <CostsPage query={route.query} />;
    case "schedules":
    case "queues":
    case "outbox":
    case "versions":
    case "audit":
    case "tokens":
      return <ConsolePage view={route.view} />;
    case "missing":
      return (
        <section>
          <h1>Not found</h1>
          <p>
            Nothing at <code>{route.path}</code>. <Link href={`${BASE}/`}>Overview</Link>
          </p>
        </section>
      );
  }
}

function title(route: Route): string {
  switch (route.view) {
    case "run":
      return route.runId;
    case "missing":
      return "Not found";
    default:
      return route.view[0]!.toUpperCase() + route.view.slice(1);
  }
}

/** Focuses the page's `h1` once it is rendered (a page may still be loading); returns a cancel. */
function focusHeading(): () => void {
  let tries = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const attempt = () => {
    const heading = document.querySelector<HTMLElement>("main h1");
    if (heading) {
      if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1");
      heading.focus({ preventScroll: false });
    } else if (tries++ < 40) timer = setTimeout(attempt, 50);
  };
  attempt();
  return () => clearTimeout(timer);
}
