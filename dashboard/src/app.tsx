import { useEffect } from "react";
import { forgetToken, useAuth } from "./api";
import { Link } from "./components/link";
import { TokenPanel } from "./components/token-panel";
import { InboxPage } from "./pages/inbox";
import { OverviewPage } from "./pages/overview";
import { RunPage } from "./pages/run";
import { RunsPage } from "./pages/runs";
import { WorkersPage } from "./pages/workers";
import { BASE, useRoute, type Route } from "./router";

const NAV = [
  { href: `${BASE}/`, label: "Overview", view: "overview" },
  { href: `${BASE}/runs`, label: "Runs", view: "runs" },
  { href: `${BASE}/inbox`, label: "Inbox", view: "inbox" },
  { href: `${BASE}/workers`, label: "Workers", view: "workers" },
] as const;

export function App() {
  const route = useRoute();
  const auth = useAuth();
  useEffect(() => {
    document.title = `${title(route)} · Cairn`;
  }, [route]);
  const active = route.view === "run" ? "runs" : route.view;
  return (
    <div className="app">
      <nav className="top">
        <Link href={`${BASE}/`} className="brand">
          ◭ Cairn
        </Link>
        {NAV.map((item) => (
          <Link key={item.view} href={item.href} className={active === item.view ? "active" : ""} aria-current={active === item.view ? "page" : undefined}>
            {item.label}
          </Link>
        ))}
        <a className="right muted" href="/openapi.json" target="_blank" rel="noreferrer">
          API
        </a>
        {auth.token && (
          <button className="nav-button" onClick={forgetToken} title="Drop the API token this tab uses">
            Forget token
          </button>
        )}
      </nav>
      <main>
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
    case "inbox":
      return <InboxPage />;
    case "workers":
      return <WorkersPage />;
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
