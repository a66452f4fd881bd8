import type { ApiRunCosts } from "cairn/client";
import { bytes, duration, usd } from "../format";
import { runPath } from "../router";
import { Link } from "./link";

type Figures = Omit<ApiRunCosts, "runId" | "children">;

/**
 * What a run cost (`GET /runs/:id/costs?includeChildren=true`): worker and step time, journal size,
 * tool calls, people's time and model spend; for a run with child runs, each figure also with its
 * children's rolled up (as an agent's budget counts its sub-agents), and links to the children.
 */
export function RunCostsView({ costs }: { costs: ApiRunCosts }) {
  const children = costs.children;
  const rolled = children && children.runs > 0 ? children.total : undefined;
  const rows: [string, string, (f: Figures) => string][] = [
    ["model cost", "cost", (f) => usd(f.model.costMicros) + (f.model.unpricedCalls > 0 ? " + unknown" : "")],
    ["model calls", "model-calls", (f) => String(f.model.modelCalls)],
    ["tokens", "tokens", (f) => String(tokens(f))],
    ["worker time", "worker", (f) => `${duration(f.workerMs)} · ${f.claims} claim${f.claims === 1 ? "" : "s"}`],
    ["step time", "steps", (f) => `${duration(f.stepMs)} · ${f.stepAttempts} attempt${f.stepAttempts === 1 ? "" : "s"}`],
    ["journal", "journal", (f) => `${f.journal.entries} entries · ${bytes(f.journal.bytes)}`],
    ["people", "human", (f) => `${f.human.requests} question${f.human.requests === 1 ? "" : "s"} · ${duration(f.human.waitMs)}`],
  ];
  return (
    <section className="run-costs" aria-labelledby="costs-heading">
      <h2 id="costs-heading">Costs</h2>
      <table className="costs" data-costs>
        <thead>
          <tr>
            <th scope="col">figure</th>
            <th scope="col">this run</th>
            {rolled && <th scope="col">with {children!.runs === 1 ? "1 child run" : `${children!.runs} child runs`}</th>}
          </tr>
        </thead>
        <tbody>
          {rows.map(([label, key, show]) => (
            <tr key={key} data-cost={key}>
              <th scope="row">{label}</th>
              <td data-own>{show(costs)}</td>
              {rolled && <td data-rolled>{show(rolled)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {children?.truncated && <p className="muted">More than {children.runs} descendants: the sum stops there.</p>}
      {children && children.childRunIds.length > 0 && (
        <p className="child-runs">
          Child runs:{" "}
          {children.childRunIds.map((id, i) => (
            <span key={id}>
              {i > 0 && ", "}
              <Link href={runPath(id)} className="mono" data-child-link={id}>
                {id}
              </Link>
            </span>
          ))}
        </p>
      )}
    </section>
  );
}

function tokens(f: Figures): number {
  const usage = f.model.usage as { inputTokens?: number; outputTokens?: number } | undefined;
  return (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
}
