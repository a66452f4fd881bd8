import { FAILED_STATUSES, LIVE_STATUSES, RUN_STATUSES, type ApiRun, type BulkResult, type BulkTarget } from "cairn/client";
import { useMemo, useState } from "react";
import { api } from "../api";
import { StartRunForm } from "../components/start-run";
import { ErrorBox, StatusBadge } from "../components/status";
import { Link } from "../components/link";
import { ago, dateTime, duration, runAge, useZoneMode, waitingText } from "../format";
import { usePolling } from "../hooks";
import { BASE, navigate, runPath } from "../router";

export const STATUSES: readonly ApiRun["status"][] = RUN_STATUSES;

/** The filters of the runs list, as kept in the URL (so a link or a reload keeps them). */
interface Filters {
  status: ApiRun["status"][];
  workflow: string;
  q: string;
  /** ISO instants. */
  after: string;
  before: string;
  topLevel: boolean;
}

function filtersOf(query: URLSearchParams): Filters {
  return {
    status: (query.get("status") ?? "").split(",").filter((s): s is ApiRun["status"] => (STATUSES as readonly string[]).includes(s)),
    workflow: query.get("workflow") ?? "",
    q: query.get("q") ?? "",
    after: validInstant(query.get("after")),
    before: validInstant(query.get("before")),
    topLevel: query.get("top") === "1",
  };
}

function validInstant(text: string | null): string {
  return text && !Number.isNaN(Date.parse(text)) ? new Date(text).toISOString() : "";
}

/** The API's filters of a {@link Filters}. */
function apiFilter(f: Filters) {
  return {
    ...(f.status.length ? { status: f.status } : {}),
    ...(f.workflow ? { workflow: f.workflow } : {}),
    ...(f.q ? { q: f.q } : {}),
    ...(f.after ? { createdAfter: Date.parse(f.after) } : {}),
    ...(f.before ? { createdBefore: Date.parse(f.before) } : {}),
    ...(f.topLevel ? { topLevel: true } : {}),
  };
}

/** An ISO instant as a `datetime-local` input's value, in the zone times are shown in. */
function toInputValue(iso: string, utc: boolean): string {
  if (!iso) return "";
  const date = new Date(iso);
  const local = utc ? date : new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
}

/** A `datetime-local` input's value, read in the zone times are shown in, as an ISO instant. */
function fromInputValue(value: string, utc: boolean): string {
  if (!value) return "";
  const ms = utc ? Date.parse(`${value}:00Z`) : new Date(value).getTime();
  return Number.isNaN(ms) ? "" : new Date(ms).toISOString();
}

/** Statuses each bulk action applies to (as the API's). */
const BULK_STATUSES = { cancel: LIVE_STATUSES, retry: FAILED_STATUSES };

/** A bulk action waiting for its confirmation: on the selected runs, or on every run the filters list. */
interface PendingBulk {
  action: "cancel" | "retry";
  target: BulkTarget;
  count: number;
}

/**
 * Runs, newest first, filtered by status, workflow, text (id, workflow, error, input, tags),
 * creation time and top-level only (kept in the URL), with the filtered set's total, refreshed
 * every 2 s; runs can be selected and cancelled or retried in bulk, after a confirmation.
 */
export function RunsPage({ query }: { query: URLSearchParams }) {
  const filters = filtersOf(query);
  const cursor = query.get("cursor") ?? undefined;
  const utc = useZoneMode() === "utc";
  const [textDraft, setTextDraft] = useState(filters.q);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [pending, setPending] = useState<PendingBulk>();
  const [outcome, setOutcome] = useState<{ text: string; failed: BulkResult["failed"] }>();
  const [actionError, setActionError] = useState<Error>();
  const key = JSON.stringify(filters);
  const page = usePolling(() => api.listRuns({ ...apiFilter(filters), ...(cursor ? { cursor } : {}), limit: 50 }), 2000, [key, cursor]);
  const count = usePolling(() => api.countRuns(apiFilter(filters)), 5000, [key]);
  const workflows = usePolling(() => api.listWorkflows(), 30_000, []);

  const go = (next: Partial<Filters> & { cursor?: string }) => {
    const f = { ...filters, ...next };
    const params = new URLSearchParams();
    if (f.status.length) params.set("status", f.status.join(","));
    if (f.workflow) params.set("workflow", f.workflow);
    if (f.q) params.set("q", f.q);
    if (f.after) params.set("after", f.after);
    if (f.before) params.set("before", f.before);
    if (f.topLevel) params.set("top", "1");
    if (next.cursor) params.set("cursor", next.cursor);
    const search = params.toString();
    setSelected(new Set());
    navigate(`${BASE}/runs${search ? `?${search}` : ""}`);
  };
  const toggle = (status: string) =>
    go({
      status: filters.status.includes(status as ApiRun["status"])
        ? filters.status.filter((s) => s !== status)
        : [...filters.status, status as ApiRun["status"]],
    });

  const ask = async (action: "cancel" | "retry") => {
    setOutcome(undefined);
    setActionError(undefined);
    try {
      if (selected.size > 0) return setPending({ action, target: { runIds: [...selected] }, count: selected.size });
      const allowed: readonly string[] = BULK_STATUSES[action];
      const status = (filters.status.length ? filters.status : (allowed as ApiRun["status"][])).filter((s) => allowed.includes(s));
      const filter = { ...apiFilter(filters), status };
      const { total } = status.length ? await api.countRuns(filter) : { total: 0 };
      setPending({ action, target: { filter }, count: total });
    } catch (error) {
      setActionError(error as Error);
    }
  };
  const confirm = async () => {
    if (!pending) return;
    setPending(undefined);
    try {
      const result =
        pending.action === "cancel" ? await api.bulkCancel(pending.target, "cancelled in bulk from the dashboard") : await api.bulkRetry(pending.target);
      setOutcome({ text: `${pending.action === "cancel" ? "Cancelled" : "Retried"} ${plural(result.done.length, "run")}`, failed: result.failed });
      setSelected(new Set());
      page.refresh();
      count.refresh();
    } catch (error) {
      setActionError(error as Error);
    }
  };

  const names = workflows.data?.workflows.map((w) => w.workflow) ?? [];
  if (filters.workflow && !names.includes(filters.workflow)) names.push(filters.workflow);
  return (
    <section>
      <header className="page-header">
        <h1>Runs</h1>
        <span className="muted" data-run-total aria-live="polite">
          {count.data
            ? `${count.data.total.toLocaleString("en-US")}${count.data.exact ? "" : "+"} ${count.data.total === 1 && count.data.exact ? "run" : "runs"}`
            : ""}
        </span>
        <div className="filters">
          <div className="chips" role="group" aria-label="status filter">
            {STATUSES.map((status) => (
              <button
                key={status}
                className={`chip status-${status} ${filters.status.includes(status) ? "on" : ""}`}
                aria-pressed={filters.status.includes(status)}
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
              go({ q: textDraft.trim() });
            }}
          >
            <input
              type="search"
              aria-label="search runs"
              placeholder="search id, workflow, error, input, tag"
              value={textDraft}
              maxLength={200}
              onChange={(e) => setTextDraft(e.target.value)}
            />
            <button type="submit">Search</button>
            <select aria-label="workflow filter" value={filters.workflow} onChange={(e) => go({ workflow: e.target.value })}>
              <option value="">all workflows</option>
              {names.map((name) => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
            <label className="inline">
              created after{" "}
              <input
                type="datetime-local"
                aria-label="created after"
                value={toInputValue(filters.after, utc)}
                onChange={(e) => go({ after: fromInputValue(e.target.value, utc) })}
              />
            </label>
            <label className="inline">
              before{" "}
              <input
                type="datetime-local"
                aria-label="created before"
                value={toInputValue(filters.before, utc)}
                onChange={(e) => go({ before: fromInputValue(e.target.value, utc) })}
              />
            </label>
            <label className="inline">
              <input type="checkbox" checked={filters.topLevel} onChange={(e) => go({ topLevel: e.target.checked })} /> top-level only
            </label>
          </form>
        </div>
      </header>
      <details className="start-run-box">
        <summary>Start a run</summary>
        <StartRunForm />
      </details>
      <div className="bulk-bar" role="group" aria-label="bulk actions">
        <button type="button" onClick={() => void ask("cancel")} data-bulk="cancel">
          {selected.size ? `Cancel selected (${selected.size})` : "Cancel all matching…"}
        </button>
        <button type="button" onClick={() => void ask("retry")} data-bulk="retry">
          {selected.size ? `Retry selected (${selected.size})` : "Retry all matching…"}
        </button>
        {pending && (
          <span className="confirm" role="alert" data-bulk-confirm={pending.count}>
            {pending.count === 0 ? (
              <>Nothing to {pending.action} here.</>
            ) : (
              <>
                {pending.action === "cancel" ? "Cancel" : "Retry"} {plural(pending.count, "run")}
                {"filter" in pending.target ? " matching these filters" : ""}?{" "}
                <button type="button" className="danger" onClick={() => void confirm()}>
                  Yes, {pending.action} {plural(pending.count, "run")}
                </button>
              </>
            )}{" "}
            <button type="button" onClick={() => setPending(undefined)}>
              {pending.count === 0 ? "OK" : "No"}
            </button>
          </span>
        )}
        {outcome && (
          <span className="muted" role="status" data-bulk-outcome>
            {outcome.text}
            {outcome.failed.length > 0 && `; ${plural(outcome.failed.length, "run")} not: ${outcome.failed[0]!.error}`}
          </span>
        )}
      </div>
      <ErrorBox error={page.error ?? actionError} />
      <RunTable
        runs={page.data?.runs}
        loading={page.loading}
        selected={selected}
        onSelect={(runId, on) => {
          const next = new Set(selected);
          if (on) next.add(runId);
          else next.delete(runId);
          setSelected(next);
        }}
      />
      <div className="pager">
        {cursor && <button onClick={() => go({})}>← newest</button>}
        {page.data?.nextCursor && <button onClick={() => go({ cursor: page.data!.nextCursor! })}>older →</button>}
      </div>
    </section>
  );
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString("en-US")} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Failure messages cut where they differ: when the page's messages share a long beginning (a
 * URL, a wrapper's words), each shows "…" and what follows it, so rows that differ only at the
 * end do not all read the same in a narrow column. Message → the text to show.
 */
export function cutWhereTheyDiffer(messages: string[]): Map<string, string> {
  const distinct = [...new Set(messages)];
  const shown = new Map<string, string>();
  for (const message of distinct) {
    let shared = 0;
    for (const other of distinct) {
      if (other === message) continue;
      let i = 0;
      while (i < message.length && i < other.length && message[i] === other[i]) i++;
      shared = Math.max(shared, i);
    }
    if (shared < 24) {
      shown.set(message, message);
      continue;
    }
    // Back to the start of the word where they part, and two words more for context (at most 24 characters).
    let from = shared;
    for (let words = 0; words < 3; words++) {
      const space = message.lastIndexOf(" ", from - 2);
      if (space < 0 || shared - space > 24) break;
      from = space + 1;
    }
    shown.set(message, `…${message.slice(from)}`);
  }
  return shown;
}

/** What a row of {@link RunTable} shows of a run (the overview's runs carry no payloads). */
export type ListedRun = Pick<ApiRun, "runId" | "workflow" | "version" | "status" | "waitingFor" | "entries" | "createdAt" | "finishedAt"> & {
  error?: { message: string };
};

/** Runs as a table; with `selected` and `onSelect`, each row has a checkbox for bulk actions. */
export function RunTable({
  runs,
  loading,
  empty = "No runs match.",
  selected,
  onSelect,
}: {
  runs: ListedRun[] | undefined;
  loading?: boolean;
  empty?: string;
  selected?: Set<string>;
  onSelect?: (runId: string, on: boolean) => void;
}) {
  const now = Date.now();
  const errors = useMemo(() => cutWhereTheyDiffer((runs ?? []).flatMap((run) => (run.error?.message ? [run.error.message] : []))), [runs]);
  if (!runs) return <p className="muted">{loading ? "Loading…" : ""}</p>;
  if (runs.length === 0) return <p className="muted empty">{empty}</p>;
  return (
    <div className="table-scroll">
      <table className="runs">
        <thead>
          <tr>
            {onSelect && (
              <th>
                <span className="visually-hidden">select</span>
              </th>
            )}
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
              {onSelect && (
                <td>
                  <input
                    type="checkbox"
                    aria-label={`select ${run.runId}`}
                    checked={selected?.has(run.runId) ?? false}
                    onChange={(e) => onSelect(run.runId, e.target.checked)}
                  />
                </td>
              )}
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
                {run.status === "failed" ? (
                  <span className="err" title={run.error?.message}>
                    {errors.get(run.error?.message ?? "") ?? run.error?.message}
                  </span>
                ) : run.status === "suspended" ? (
                  waitingText(run)
                ) : (
                  ""
                )}
              </td>
              <td className="num col-wide">{run.entries}</td>
              <td title={dateTime(run.createdAt)}>{ago(run.createdAt, now)}</td>
              <td className="num col-wide">{duration(runAge(run, now))}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
