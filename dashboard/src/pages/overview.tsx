import type { ApiHumanRequest, ApiRun } from "cairn/client";
import { api } from "../api";
import { Link } from "../components/link";
import { ErrorBox, Loaded, StatusBadge } from "../components/status";
import { ago, duration, runAge, spendOf, usd } from "../format";
import { usePolling } from "../hooks";
import { BASE, runPath } from "../router";
import { RunTable, STATUSES } from "./runs";

const SAMPLE = 1000;
const COSTED = 40;

/** At a glance: what is stuck, slow, failing or expensive, and whether people are keeping up. */
export function OverviewPage() {
  const recent = usePolling(() => api.listRuns({ limit: SAMPLE }), 4000, []);
  const failed = usePolling(() => api.listRuns({ status: "failed", limit: SAMPLE }), 5000, []);
  const stuck = usePolling(() => api.listStuckRuns({ limit: 20 }), 5000, []);
  const pending = usePolling(() => api.listHumanRequests({ status: "pending" }), 4000, []);
  const answered = usePolling(() => api.listHumanRequests({ status: "answered" }), 10000, []);
  const workers = usePolling(() => api.listWorkers(), 5000, []);
  const costs = usePolling(() => costOfRecent(), 15000, []);

  const runs = recent.data?.runs ?? [];
  const now = Date.now();
  const count = (status: ApiRun["status"]) => runs.filter((run) => run.status === status).length;
  const finished = count("completed") + count("failed") + count("cancelled") + count("compensated") + count("compensation_failed");
  const slow = runs
    .filter((run) => run.status === "running" || run.status === "pending")
    .sort((a, b) => runAge(b, now) - runAge(a, now))
    .slice(0, 5);

  return (
    <section>
      <header className="page-header">
        <h1>Overview</h1>
        <span className="muted">{recent.data ? `last ${runs.length}${recent.data.nextCursor ? "+" : ""} runs` : ""}</span>
      </header>
      <ErrorBox error={recent.error} />
      <div className="tiles">
        {STATUSES.map((status) => (
          <Link key={status} className={`tile status-${status}`} href={`${BASE}/runs?status=${status}`}>
            <div className="tile-value">{recent.data ? count(status) : placeholder(recent)}</div>
            <div className="tile-label">{status.replace("_", " ")}</div>
          </Link>
        ))}
        <div className="tile">
          <div className="tile-value">{!recent.data ? placeholder(recent) : finished ? `${Math.round((100 * count("completed")) / finished)}%` : "—"}</div>
          <div className="tile-label">completion rate</div>
        </div>
        <Link className={`tile ${pending.data?.length ? "attention" : ""}`} href={`${BASE}/inbox`}>
          <div className="tile-value">{pending.data?.length ?? placeholder(pending)}</div>
          <div className="tile-label">waiting for a person</div>
        </Link>
        <Link className={`tile ${workers.data?.length === 0 ? "attention" : ""}`} href={`${BASE}/workers`}>
          <div className="tile-value">{workers.data?.length ?? placeholder(workers)}</div>
          <div className="tile-label">live workers</div>
        </Link>
      </div>

      <div className="grid">
        <div className="panel">
          <h2>Stuck</h2>
          <p className="muted small">Runnable runs no worker has picked up, or whose lease expired.</p>
          <Loaded polled={stuck}>{(data) => <RunTable runs={data.runs} empty="Nothing is stuck." />}</Loaded>
        </div>
        <div className="panel">
          <h2>Slowest in flight</h2>
          <p className="muted small">Running and pending runs of the last {SAMPLE}, longest first.</p>
          <Loaded polled={recent}>{() => <RunTable runs={slow} empty="Nothing is running." />}</Loaded>
        </div>
        <div className="panel">
          <h2>Failure patterns</h2>
          <p className="muted small">The last {SAMPLE} failed runs, grouped by error.</p>
          <Loaded polled={failed}>{(data) => <FailurePatterns runs={data.runs} />}</Loaded>
        </div>
        <div className="panel" data-panel="failing-steps">
          <h2>Top failing steps</h2>
          <p className="muted small">Steps whose failure failed a run (of the last {SAMPLE} failed runs), by workflow and step name.</p>
          <Loaded polled={failed}>{(data) => <FailingSteps runs={data.runs} />}</Loaded>
        </div>
        <div className="panel">
          <h2>Spend</h2>
          <p className="muted small">Model tokens and cost, folded from the journals of the {COSTED} most recent runs.</p>
          <Loaded polled={costs}>{(rows) => <Spend rows={rows} />}</Loaded>
        </div>
        <div className="panel" data-panel="human-input">
          <h2>Human input</h2>
          <Loaded polled={answered}>{(requests) => <HumanInput requests={requests} />}</Loaded>
        </div>
      </div>
    </section>
  );
}

/** A tile's value before its data came: "…" while loading, "?" (with the error as a tooltip) when it failed. */
function placeholder(polled: { error: Error | undefined }) {
  return polled.error ? <span title={polled.error.message}>?</span> : "…";
}

/**
 * Whether a person answered: a request that timed out is closed by its escalation (`by: "timeout"`),
 * and one whose run ended unanswered is closed with a `closedReason`; neither is an answer.
 */
function answeredByPerson(request: ApiHumanRequest): boolean {
  if (request.status !== "answered" || !request.answeredAt || !request.answer) return false;
  if ((request as { closedReason?: unknown }).closedReason) return false;
  return request.answer.by !== "timeout";
}

/** How long people take to answer, from real answers only; timed-out questions counted apart. */
function HumanInput({ requests }: { requests: ApiHumanRequest[] }) {
  const waits = requests.filter(answeredByPerson).map((r) => Date.parse(r.answeredAt!) - Date.parse(r.createdAt));
  waits.sort((a, b) => a - b);
  const timedOut = requests.filter((r) => r.status === "answered" && r.answer?.by === "timeout").length;
  return (
    <>
      {waits.length === 0 ? (
        <p className="muted" data-answered="0">
          No answers yet.
        </p>
      ) : (
        <p data-answered={waits.length}>
          {waits.length} answered · median wait <b>{duration(waits[Math.floor(waits.length / 2)]!)}</b> · longest <b>{duration(waits.at(-1)!)}</b>
        </p>
      )}
      {timedOut > 0 && (
        <p className="muted" data-timed-out={timedOut}>
          {timedOut} timed out unanswered.
        </p>
      )}
    </>
  );
}

function FailurePatterns({ runs }: { runs: ApiRun[] }) {
  const groups = new Map<string, { count: number; workflows: Set<string>; example: string }>();
  for (const run of runs) {
    if (run.status !== "failed" || !run.error) continue;
    const key = `${run.error.name}${run.error.code ? ` [${run.error.code}]` : ""}: ${run.error.message.slice(0, 160)}`;
    const group = groups.get(key) ?? { count: 0, workflows: new Set<string>(), example: run.runId };
    group.count++;
    group.workflows.add(run.workflow);
    groups.set(key, group);
  }
  const top = [...groups.entries()].sort((a, b) => b[1].count - a[1].count).slice(0, 8);
  if (top.length === 0) return <p className="muted">No failed runs.</p>;
  return (
    <table>
      <tbody>
        {top.map(([message, group]) => (
          <tr key={message}>
            <td className="num">{group.count}×</td>
            <td className="err">{message}</td>
            <td>{[...group.workflows].join(", ")}</td>
            <td>
              <Link href={runPath(group.example)}>e.g.</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A step's name without its call counter (`#0`) and loop iterations: `turn#0/3/model#0` is `turn/model`. */
function stepName(opKey: string): string {
  return opKey
    .split("/")
    .filter((part) => !/^\d+$/.test(part))
    .map((part) => part.replace(/#\d+$/, ""))
    .join("/");
}

/** Failed runs whose error came from a step (its `opKey`), by workflow and step name; the newest run gives the last error. */
function FailingSteps({ runs }: { runs: ApiRun[] }) {
  const groups = new Map<string, { workflow: string; step: string; count: number; last: ApiRun; lastError: string }>();
  for (const run of runs) {
    const opKey = (run.error as { opKey?: unknown } | undefined)?.opKey;
    if (run.status !== "failed" || typeof opKey !== "string") continue;
    const step = stepName(opKey);
    const key = `${run.workflow}\0${step}`;
    const group = groups.get(key);
    if (group) {
      group.count++;
      continue;
    }
    // Runs come newest first: the first one seen has the last error. A step's own error is the cause of STEP_FAILED.
    const cause = (run.error as { cause?: { name?: string; message?: string } }).cause;
    const lastError = cause?.message ? `${cause.name ?? "Error"}: ${cause.message}` : run.error!.message;
    groups.set(key, { workflow: run.workflow, step, count: 1, last: run, lastError });
  }
  const top = [...groups.values()].sort((a, b) => b.count - a.count).slice(0, 8);
  if (top.length === 0) return <p className="muted">No run failed in a step.</p>;
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
        {top.map((group) => (
          <tr key={`${group.workflow}/${group.step}`} data-step={group.step}>
            <td className="num">{group.count}×</td>
            <td>
              <span className="mono">{group.step}</span>
              <div className="muted small">{group.workflow}</div>
            </td>
            <td className="err">{group.lastError.slice(0, 200)}</td>
            <td title={group.last.finishedAt ?? group.last.updatedAt}>
              <Link href={runPath(group.last.runId)}>{ago(group.last.finishedAt ?? group.last.updatedAt, Date.now())}</Link>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

interface CostRow {
  run: ApiRun;
  costMicros: number;
  tokens: number;
}

async function costOfRecent(): Promise<CostRow[]> {
  const { runs } = await api.listRuns({ limit: COSTED });
  return Promise.all(
    runs.map(async (run) => {
      const { entries } = await api.journal(run.runId, { limit: 1000 });
      const spend = spendOf(entries);
      return { run, costMicros: spend.costMicros, tokens: spend.inputTokens + spend.outputTokens };
    }),
  );
}

function Spend({ rows }: { rows: CostRow[] }) {
  const byWorkflow = new Map<string, { costMicros: number; tokens: number; runs: number }>();
  for (const row of rows) {
    const total = byWorkflow.get(row.run.workflow) ?? { costMicros: 0, tokens: 0, runs: 0 };
    total.costMicros += row.costMicros;
    total.tokens += row.tokens;
    total.runs++;
    byWorkflow.set(row.run.workflow, total);
  }
  if (rows.every((row) => row.tokens === 0 && row.costMicros === 0)) return <p className="muted">No model calls in the {rows.length} most recent runs.</p>;
  const expensive = rows
    .filter((row) => row.tokens > 0)
    .sort((a, b) => b.costMicros - a.costMicros || b.tokens - a.tokens)
    .slice(0, 5);
  return (
    <>
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
          {[...byWorkflow.entries()].map(([workflow, total]) => (
            <tr key={workflow}>
              <td>{workflow}</td>
              <td className="num">{total.runs}</td>
              <td className="num">{total.tokens}</td>
              <td className="num">{usd(total.costMicros)}</td>
              <td className="num">{usd(total.costMicros / total.runs)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {expensive.length > 0 && (
        <>
          <h3>Most expensive</h3>
          <ul className="plain">
            {expensive.map((row) => (
              <li key={row.run.runId}>
                <Link href={runPath(row.run.runId)} className="mono">
                  {row.run.runId}
                </Link>{" "}
                <StatusBadge status={row.run.status} /> {usd(row.costMicros)} · {row.tokens} tokens
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}
