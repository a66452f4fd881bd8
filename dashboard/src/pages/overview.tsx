import { TERMINAL_STATUSES } from "cairn/client";
import { useState } from "react";
import { getJson } from "../api";
import { AlertsPanel } from "../components/alerts-panel";
import { Link } from "../components/link";
import { ErrorBox, Loaded } from "../components/status";
import { ago, duration, usd } from "../format";
import { usePolling } from "../hooks";
import type { OverviewSummary } from "../overview-types";
import { BASE, runPath } from "../router";
import { RunTable, STATUSES } from "./runs";

/** The time ranges failures and spend can cover. */
const RANGES = [
  { key: "1h", label: "1 hour", ms: 3_600_000 },
  { key: "24h", label: "24 hours", ms: 24 * 3_600_000 },
  { key: "7d", label: "7 days", ms: 7 * 24 * 3_600_000 },
  { key: "30d", label: "30 days", ms: 30 * 24 * 3_600_000 },
  { key: "all", label: "all time", ms: null },
] as const;

/**
 * At a glance: what is stuck, slow, failing or expensive, and whether people are keeping up. One
 * request (`GET /overview`) every 20 s: counts over all runs, failures and spend over the range.
 */
export function OverviewPage() {
  const [range, setRange] = useState<(typeof RANGES)[number]["key"]>("24h");
  const chosen = RANGES.find((r) => r.key === range)!;
  const summary = usePolling(() => getJson<OverviewSummary>(`/overview?since=${chosen.ms === null ? 0 : Date.now() - chosen.ms}`), 20_000, [range]);
  const data = summary.data;
  const count = (status: string) => data?.counts.byStatus[status] ?? 0;
  const finished = TERMINAL_STATUSES.reduce((sum, status) => sum + count(status), 0);

  return (
    <section>
      <header className="page-header">
        <h1>Overview</h1>
        <span className="muted">{data ? `${data.counts.total} runs in all` : ""}</span>
        <div className="chips" role="group" aria-label="time range of failures and spend">
          {RANGES.map((r) => (
            <button key={r.key} className={`chip ${range === r.key ? "on" : ""}`} aria-pressed={range === r.key} onClick={() => setRange(r.key)}>
              {r.label}
            </button>
          ))}
        </div>
      </header>
      <ErrorBox error={summary.error} />
      <div className="tiles">
        {STATUSES.map((status) => (
          <Link key={status} className={`tile status-${status}`} href={`${BASE}/runs?status=${status}`}>
            <div className="tile-value" data-count={status}>
              {data ? count(status) : placeholder(summary)}
            </div>
            <div className="tile-label">{status.replace("_", " ")}</div>
          </Link>
        ))}
        <div className="tile">
          <div className="tile-value">{!data ? placeholder(summary) : finished ? `${Math.round((100 * count("completed")) / finished)}%` : "—"}</div>
          <div className="tile-label">completion rate</div>
        </div>
        <Link className={`tile ${data?.human.pending ? "attention" : ""}`} href={`${BASE}/human-requests`}>
          <div className="tile-value">{data ? `${data.human.pending}${data.human.pendingCapped ? "+" : ""}` : placeholder(summary)}</div>
          <div className="tile-label">waiting for a person</div>
        </Link>
        <Link className={`tile ${data?.workers === 0 ? "attention" : ""}`} href={`${BASE}/workers`}>
          <div className="tile-value">{data ? data.workers : placeholder(summary)}</div>
          <div className="tile-label">live workers</div>
        </Link>
      </div>

      <div className="grid">
        <AlertsPanel polled={summary} />
        <div className="panel">
          <h2>Stuck</h2>
          <p className="muted small">Runnable runs no worker has picked up, or whose lease expired.</p>
          <Loaded polled={summary}>{(d) => <RunTable runs={d.stuck} empty="Nothing is stuck." />}</Loaded>
        </div>
        <div className="panel">
          <h2>Slowest in flight</h2>
          <p className="muted small">Running and pending runs, longest first.</p>
          <Loaded polled={summary}>{(d) => <RunTable runs={d.slowest} empty="Nothing is running." />}</Loaded>
        </div>
        <div className="panel">
          <h2>Failure patterns</h2>
          <p className="muted small">Failed runs of the last {chosen.label}, grouped by error with numbers, ids and hashes masked.</p>
          <Loaded polled={summary}>{(d) => <FailurePatterns failures={d.failures} />}</Loaded>
        </div>
        <div className="panel" data-panel="failing-steps">
          <h2>Top failing steps</h2>
          <p className="muted small">Steps whose failure failed a run (last {chosen.label}), by workflow and step name.</p>
          <Loaded polled={summary}>{(d) => <FailingSteps failures={d.failures} />}</Loaded>
        </div>
        <div className="panel" data-panel="spend">
          <h2>Spend</h2>
          <p className="muted small">Model tokens and cost of the runs started in the last {chosen.label}; a run's total includes its children.</p>
          <Loaded polled={summary}>{(d) => <Spend spend={d.spend} range={chosen.label} />}</Loaded>
        </div>
        <div className="panel" data-panel="human-input">
          <h2>Human input</h2>
          <Loaded polled={summary}>{(d) => <HumanInput human={d.human} />}</Loaded>
        </div>
      </div>
    </section>
  );
}

/** A tile's value before its data came: "…" while loading, "?" (with the error as a tooltip) when it failed. */
function placeholder(polled: { error: Error | undefined }) {
  return polled.error ? <span title={polled.error.message}>?</span> : "…";
}

/** How long people take to answer, from real answers only; timed-out questions counted apart. */
function HumanInput({ human }: { human: OverviewSummary["human"] }) {
  return (
    <>
      {human.answered === 0 || human.medianWaitMs === null || human.longestWaitMs === null ? (
        <p className="muted" data-answered="0">
          No answers yet.
        </p>
      ) : (
        <p data-answered={human.answered}>
          {human.answered} answered · median wait <b>{duration(human.medianWaitMs)}</b> · longest <b>{duration(human.longestWaitMs)}</b>
        </p>
      )}
      {human.timedOut > 0 && (
        <p className="muted" data-timed-out={human.timedOut}>
          {human.timedOut} timed out unanswered.
        </p>
      )}
    </>
  );
}

function FailurePatterns({ failures }: { failures: OverviewSummary["failures"] }) {
  if (failures.patterns.length === 0) return <p className="muted">No failed runs.</p>;
  return (
    <>
      <table>
        <tbody>
          {failures.patterns.map((group) => (
            <tr key={group.pattern} data-pattern={group.pattern}>
              <td className="num">{group.count}×</td>
              <td className="err" title={group.example}>
                {group.pattern}
              </td>
              <td>{group.workflows.join(", ")}</td>
              <td>
                <Link href={runPath(group.exampleRunId)}>e.g.</Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {failures.truncated && <p className="muted small">Of the newest {failures.scanned} failed runs.</p>}
    </>
  );
}

function FailingSteps({ failures }: { failures: OverviewSummary["failures"] }) {
  if (failures.steps.length === 0) return <p className="muted">No run failed in a step.</p>;
  return (
    <table>
      <thead>
        <tr>
          <th className="num">runs</th>
          <th>step</th>
          <th>last error</th>
          <th>last</th>
        </tr>
      </thead>
      <tbody>
        {failures.steps.map((group) => (
          <tr key={`${group.workflow}/${group.step}`} data-step={group.step}>
            <td className="num">{group.count}×</td>
            <td>
              <span className="mono">{group.step}</span>
              <div className="muted small">{group.workflow}</div>
            </td>
            <td className="err">{group.lastError}</td>
            <td title={group.lastAt}>
              <Link href={runPath(group.lastRunId)}>{ago(group.lastAt, Date.now())}</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Spend({ spend, range }: { spend: OverviewSummary["spend"]; range: string }) {
  if (spend.modelCalls === 0) return <p className="muted">No model calls in runs started in the last {range}.</p>;
  return (
    <>
      <p data-spend-total={spend.costMicros}>
        <b>{usd(spend.costMicros)}</b> · {spend.modelCalls} model calls · {spend.inputTokens + spend.outputTokens} tokens
        {spend.truncated && <span className="muted"> (the oldest runs of the range only)</span>}
      </p>
      <table>
        <thead>
          <tr>
            <th>workflow</th>
            <th className="num">runs</th>
            <th className="num">tokens</th>
            <th className="num">cost</th>
            <th className="num">per run</th>
          </tr>
        </thead>
        <tbody>
          {spend.byWorkflow.map((total) => (
            <tr key={total.workflow}>
              <td>{total.workflow}</td>
              <td className="num">{total.runs}</td>
              <td className="num">{total.tokens}</td>
              <td className="num">{usd(total.costMicros)}</td>
              <td className="num">{usd(total.costMicros / total.runs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {spend.topRuns.length > 0 && (
        <>
          <h3>Most expensive</h3>
          <ul className="plain">
            {spend.topRuns.map((row) => (
              <li key={row.runId}>
                <Link href={runPath(row.runId)} className="mono">
                  {row.runId}
                </Link>{" "}
                {usd(row.costMicros)} · {row.tokens} tokens{row.children > 0 ? ` · with ${row.children} child run${row.children === 1 ? "" : "s"}` : ""}
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
