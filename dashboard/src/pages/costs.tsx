import type { ApiCostTotals } from "cairn/client";
import { useState } from "react";
import { api } from "../api";
import { Link } from "../components/link";
import { ErrorBox, Loaded } from "../components/status";
import { bytes, duration, usd } from "../format";
import { usePolling } from "../hooks";
import { BASE } from "../router";
import "./costs.css";

type WorkflowTotals = ApiCostTotals["workflows"][number];

/** The time ranges the costs can cover (runs created in it). */
export const COST_RANGES = [
  { key: "1h", label: "1 hour", ms: 3_600_000 },
  { key: "24h", label: "24 hours", ms: 24 * 3_600_000 },
  { key: "7d", label: "7 days", ms: 7 * 24 * 3_600_000 },
  { key: "30d", label: "30 days", ms: 30 * 24 * 3_600_000 },
  { key: "all", label: "all time", ms: null },
] as const;

type RangeKey = (typeof COST_RANGES)[number]["key"];

/**
 * What each workflow cost over a time range (`GET /costs`): runs, model spend and tokens beside
 * worker time, journal bytes, tool calls by tool and the time people took. The range is in the URL
 * (`/ui/costs?range=7d`), so a link or a reload keeps it. Polls every 60 s: the server reads each
 * run's journal (at most the newest 2,000 runs), so this page asks less often than the others.
 */
export function CostsPage({ query }: { query: URLSearchParams }) {
  const [key, setKey] = useState<RangeKey>(() => COST_RANGES.find((r) => r.key === query.get("range"))?.key ?? "24h");
  const range = COST_RANGES.find((r) => r.key === key)!;
  const totals = usePolling(() => api.costs({ since: range.ms === null ? 0 : Date.now() - range.ms }), 60_000, [range.key]);
  // The URL follows the choice without a navigation: focus stays on the button that was pressed.
  const choose = (next: RangeKey) => {
    setKey(next);
    window.history.replaceState(null, "", `${BASE}/costs${next === "24h" ? "" : `?range=${next}`}`);
  };
  return (
    <section>
      <header className="page-header">
        <h1>Costs</h1>
        <span className="muted" data-costs-runs>
          {totals.data ? `${totals.data.runs} run${totals.data.runs === 1 ? "" : "s"} created in the last ${range.label}` : ""}
        </span>
        <div className="chips costs-range" role="group" aria-label="time range of the costs">
          {COST_RANGES.map((r) => (
            <button key={r.key} className={`chip ${range.key === r.key ? "on" : ""}`} aria-pressed={range.key === r.key} onClick={() => choose(r.key)}>
              {r.label}
            </button>
          ))}
        </div>
      </header>
      <p className="muted small">
        By workflow, over the runs created in the range: what the models cost, and what else the runs used — workers&apos; time, journal storage, tool calls and
        people&apos;s time. One run&apos;s figures are on its page.
      </p>
      <ErrorBox error={totals.error} />
      <Loaded polled={totals}>{(data) => <CostsTable totals={data} />}</Loaded>
    </section>
  );
}

function CostsTable({ totals }: { totals: ApiCostTotals }) {
  if (totals.workflows.length === 0) return <p className="muted empty">No run was created in this range.</p>;
  return (
    <>
      {totals.truncated && (
        <p className="costs-notice" role="status">
          The range holds more runs than one answer reads: these totals cover the newest {totals.runs}.
        </p>
      )}
      <div className="table-scroll">
        <table className="costs-by-workflow" data-costs-table>
          <thead>
            <tr>
              <th scope="col">workflow</th>
              <th scope="col" className="num">
                runs
              </th>
              <th scope="col" className="num">
                model spend
              </th>
              <th scope="col" className="num">
                tokens in · out
              </th>
              <th scope="col" className="num">
                worker time
              </th>
              <th scope="col" className="num">
                journal
              </th>
              <th scope="col">tool calls</th>
              <th scope="col" className="num">
                people
              </th>
            </tr>
          </thead>
          <tbody>
            {totals.workflows.map((w) => (
              <tr key={w.workflow} data-workflow={w.workflow}>
                <th scope="row" className="mono">
                  <Link href={`${BASE}/runs?workflow=${encodeURIComponent(w.workflow)}`}>{w.workflow}</Link>
                </th>
                <td className="num" data-cost="runs">
                  {w.runs}
                </td>
                <td className="num" data-cost="spend" title={spendTitle(w)}>
                  {usd(w.model.costMicros)}
                  {w.model.unpricedCalls > 0 && <span className="muted"> + unknown</span>}
                </td>
                <td className="num" data-cost="tokens">
                  {w.model.usage.inputTokens.toLocaleString("en-US")} · {w.model.usage.outputTokens.toLocaleString("en-US")}
                </td>
                <td className="num" data-cost="worker" title={`${w.claims} claims; steps ${duration(w.stepMs)} in ${w.stepAttempts} attempts`}>
                  {duration(w.workerMs)}
                </td>
                <td className="num" data-cost="journal" title={`${w.journal.bytes.toLocaleString("en-US")} bytes`}>
                  {bytes(w.journal.bytes)}
                  <div className="muted small">
                    {w.journal.entries.toLocaleString("en-US")} {w.journal.entries === 1 ? "entry" : "entries"}
                  </div>
                </td>
                <td data-cost="tools">
                  <ToolCalls calls={w.toolCalls} />
                </td>
                <td className="num" data-cost="human">
                  {w.human.requests === 0 ? (
                    <span className="muted">—</span>
                  ) : (
                    <>
                      {duration(w.human.waitMs)}
                      <div className="muted small">
                        {w.human.requests} question{w.human.requests === 1 ? "" : "s"}
                        {w.human.pending > 0 ? `, ${w.human.pending} open` : ""}
                      </div>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Tool calls by tool, most called first. */
function ToolCalls({ calls }: { calls: Record<string, number> }) {
  const tools = Object.entries(calls).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  if (tools.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="tool-calls">
      {tools.map(([tool, count]) => (
        <li key={tool} data-tool={tool}>
          <span className="mono">{tool}</span> <span data-count>×{count}</span>
        </li>
      ))}
    </ul>
  );
}

function spendTitle(w: WorkflowTotals): string {
  const parts = [`${w.model.modelCalls} model call${w.model.modelCalls === 1 ? "" : "s"}`];
  if (w.model.unpricedCalls > 0) parts.push(`${w.model.unpricedCalls} without a price`);
  if (w.model.possiblyBilledMicros > 0) parts.push(`${usd(w.model.possiblyBilledMicros)} possibly billed for calls whose answer was lost`);
  return parts.join("; ");
}
