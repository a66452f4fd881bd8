import { Link } from "../components/link";
import { BASE } from "../router";
import "./console.css";
import { AuditPage } from "./audit-page";
import { OutboxPage } from "./outbox-page";
import { QueuesPage } from "./queues-page";
import { SchedulesPage } from "./schedules-page";
import { TokensPage } from "./tokens-page";
import { VersionsPage } from "./versions-page";
import { CONSOLE_VIEWS, type ConsoleView } from "./views";

/** One of the operator's pages, under tabs that lead to the others. */
export function ConsolePage({ view }: { view: ConsoleView }) {
  return (
    <>
      <nav className="console-tabs" aria-label="operate">
        {CONSOLE_VIEWS.map((entry) => (
          <Link
            key={entry.view}
            href={`${BASE}/${entry.view}`}
            className={entry.view === view ? "active" : ""}
            aria-current={entry.view === view ? "page" : undefined}
          >
            {entry.label}
          </Link>
        ))}
      </nav>
      <ConsoleBody view={view} />
    </>
  );
}

function ConsoleBody({ view }: { view: ConsoleView }) {
  switch (view) {
    case "schedules":
      return <SchedulesPage />;
    case "queues":
      return <QueuesPage />;
    case "outbox":
      return <OutboxPage />;
    case "versions":
      return <VersionsPage />;
    case "audit":
      return <AuditPage />;
    case "tokens":
      return <TokensPage />;
  }
}
