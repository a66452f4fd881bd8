import type { ApiRun } from "cairn/client";
import { useState } from "react";
import { api } from "../api";
import { StartRunForm } from "../components/start-run";
import { ErrorBox, StatusBadge } from "../components/status";
import { Link } from "../components/link";
import { ago, duration, runAge, waitingText } from "../format";
import { usePolling } from "../hooks";
import { BASE, navigate, runPath } from "../router";

export const STATUSES: ApiRun["status"][] = [
  "pending",
  "running",
  "suspended",
  "completed",
  "failed",
  "cancelled",
  "compensated",
  "compensation_failed",
  "dead",
];

/** Runs, newest first, filtered by status, workflow and text (kept in the URL), refreshed every 2 s. */
export function RunsPage({ query }: { query: URLSearchParams }) {
  const statuses = (query.get("status") ?? "").split(",").filter((s): s is ApiRun["status"] => (STATUSES as string[]).includes(s));
  const workflow = query.get("workflow") ?? "";
  const text = query.get("q") ?? "";
  const cursor = query.get("cursor") ?? undefined;
  const [workflowDraft, setWorkflowDraft] = useState(workflow);
  const [textDraft, setTextDraft] = useState(text);
  const page = usePolling(
    () =>
      api.listRuns({
        ...(statuses.length ? { status: statuses } : {}),
        ...(workflow ? { workflow } : {}),
        ...(text ? { q: text } : {}),
        ...(cursor ? { cursor } : {}),
        limit: 50,
      }),
    2000,
    [statuses.join(), workflow, text, cursor],
  );

  const go = (next: { status?: string[]; workflow?: string; q?: string; cursor?: string }) => {
    const params = new URLSearchParams();
    const status = next.status ?? statuses;
    const wf = next.workflow ?? workflow;
    const q = next.q ?? text;
    if (status.length) params.set("status", status.join(","));
    if (wf) params.set("workflow", wf);
    if (q) params.set("q", q);
    if (next.cursor) params.set("cursor", next.cursor);
    const search = params.toString();
    navigate(`${BASE}/runs${search ? `?${search}` : ""}`);
  };
  const toggle = (status: string) =>
    go({ status: statuses.includes(status as ApiRun["status"]) ? statuses.filter((s) => s !== status) : [...statuses, status] });

  return (
    <section>
      <header className="page-header">
        <h1>Runs</h1>
        <div className="filters">
          <div className="chips" role="group" aria-label="status filter">
            {STATUSES.map((status) => (
              <button
                key={status}
                className={`chip status-${status} ${statuses.includes(status) ? "on" : ""}`}
                aria-pressed={statuses.includes(status)}
                onClick={() => toggle(status)}
              >
                {status}
              </button>
            ))}
          </div>
          <form
            className="filter-inputs"
            onSubmit={(event) => {
              event.preventDefault();
              go({ workflow: workflowDraft.trim(), q: textDraft.trim() });
            }}
          >
            <input
              type="search"
              aria-label="search runs"
              placeholder="search id, workflow, error"
              value={textDraft}
              maxLength={200}
              onChange={(e) => setTextDraft(e.target.value)}
            />
            <input aria-label="workflow filter" placeholder="workflow" value={workflowDraft} onChange={(e) => setWorkflowDraft(e.target.value)} />
            <button type="submit">Filter</button>
          </form>
        </div>
      </header>
      <details className="start-run-box">
        <summary>Start a run</summary>
        <StartRunForm />
      </details>
      <ErrorBox error={page.error} />
      <RunTable runs={page.data?.runs} loading={page.loading} />
      <div className="pager">
        {cursor && <button onClick={() => go({})}>← newest</button>}
        {page.data?.nextCursor && <button onClick={() => go({ cursor: page.data!.nextCursor! })}>older →</button>}
      </div>
    </section>
  );
}

/** What a row of {@link RunTable} shows of a run (the overview's runs carry no payloads). */
export type ListedRun = Pick<ApiRun, "runId" | "workflow" | "version" | "status" | "waitingFor" | "entries" | "createdAt" | "finishedAt"> & {
  error?: { message: string };
};

export function RunTable({ runs, loading, empty = "No runs match." }: { runs: ListedRun[] | undefined; loading?: boolean; empty?: string }) {
  const now = Date.now();
  if (!runs) return <p className="muted">{loading ? "Loading…" : ""}</p>;
  if (runs.length === 0) return <p className="muted empty">{empty}</p>;
  return (
    <div className="table-scroll">
      <table className="runs">
        <thead>
          <tr>
            <th>run</th>
            <th>workflow</th>
            <th>status</th>
            <th>waiting for / error</th>
            <th className="num col-wide">entries</th>
            <th>started</th>
            <th className="num col-wide">took</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((run) => (
            <tr key={run.runId} data-run-id={run.runId}>
              <td className="mono">
                <Link href={runPath(run.runId)}>{run.runId}</Link>
              </td>
              <td>
                {run.workflow}
                <span className="muted"> v{run.version}</span>
              </td>
              <td>
                <StatusBadge status={run.status} />
              </td>
              <td className="detail">
                {run.status === "failed" ? <span className="err">{run.error?.message}</span> : run.status === "suspended" ? waitingText(run) : ""}
              </td>
              <td className="num col-wide">{run.entries}</td>
              <td title={run.createdAt}>{ago(run.createdAt, now)}</td>
              <td className="num col-wide">{duration(runAge(run, now))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
