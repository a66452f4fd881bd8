import { isTerminal, type ApiJournalEntry, type ApiRun } from "cairn/client";
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { api } from "../api";
import { AgentPanel } from "../components/agent-panel";
import { RunActions } from "../components/run-actions";
import { Waterfall } from "../components/waterfall";
import { addPiece, livePiece, LiveOutputView, type LiveOutput } from "../components/live-output";
import { isAgentRun } from "../agent-view";
import { AnswerForm } from "../components/answer-form";
import { RunCostsView } from "../components/run-costs";
import { RequestContext } from "../components/request-context";
import { JsonView } from "../components/json-view";
import { ErrorBox, StatusBadge } from "../components/status";
import { ErrorDetail } from "../components/timeline";
import { JournalView } from "../components/journal-view";
import { dateTime, duration, runAge, spendOf, usd, waitingText } from "../format";
import { usePolling } from "../hooks";
import { Link } from "../components/link";
import { BASE, runPath } from "../router";

/** One run: its state, what it waits for, questions to answer, spend, and the live journal. */
export function RunPage({ runId }: { runId: string }) {
  const run = usePolling(() => api.getRun(runId), 2000, [runId]);
  const requests = usePolling(() => api.listHumanRequests({ runId, status: "pending" }), 2000, [runId]);
  const { entries, live, error: streamError, partial } = useLiveJournal(runId, run.data);
  const spend = useMemo(() => spendOf(entries), [entries]);
  const agentRun = useMemo(() => isAgentRun(entries), [entries]);
  const [waterfallOpen, setWaterfallOpen] = useState(false);
  // Costs with the child runs' rolled up: their spend is theirs, journaled in their own runs.
  const costs = usePolling(() => api.runCosts(runId, { includeChildren: true }), 3000, [runId]);

  // A new entry usually means a new state: refresh the run and its questions at once.
  const refreshRun = run.refresh;
  const refreshRequests = requests.refresh;
  const refreshCosts = costs.refresh;
  const last = entries.at(-1)?.seq;
  useEffect(() => {
    if (last === undefined) return;
    refreshRun();
    refreshRequests();
    refreshCosts();
  }, [last, refreshRun, refreshRequests, refreshCosts]);
  const rolled = costs.data?.children && costs.data.children.runs > 0 ? costs.data.children.total.model : undefined;

  // One "Run not found", not the poll's and the stream's errors side by side with "reconnecting…".
  if (isNotFound(run.error) || isNotFound(streamError)) {
    return (
      <section>
        <h1>Run not found</h1>
        <p>
          No run <code>{runId}</code> in this store. <Link href={`${BASE}/runs`}>All runs</Link>
        </p>
      </section>
    );
  }
  const r = run.data;
  return (
    <section>
      <header className="page-header">
        <div>
          <div className="crumbs">
            <Link href={`${BASE}/runs`}>Runs</Link> /
          </div>
          <h1 className="mono">{runId}</h1>
        </div>
        {r && <StatusBadge status={r.status} />}
        {r && <RunActions run={r} entries={entries} onDone={refreshRun} />}
      </header>
      {/* Before the run first loads, its error is the page's; after, the poll's error says the view may be stale. */}
      <ErrorBox error={run.error} />
      {r && (
        <div className="facts">
          <Fact label="workflow">
            {r.workflow} <span className="muted">v{r.version}</span>
          </Fact>
          <Fact label="started">{dateTime(r.createdAt)}</Fact>
          <Fact label={r.finishedAt ? "took" : "running for"}>{duration(runAge(r))}</Fact>
          <Fact label="entries">
            {r.entries}
            {r.compaction && (
              <span
                className="muted"
                data-fact="compacted"
                title={`Deleted by loop compaction: superseded by the loop snapshot at seq ${r.compaction.coveredSeq}; their seqs are gaps`}
              >
                {" "}
                · {r.compaction.entries} compacted
              </span>
            )}
          </Fact>
          <Fact label="model calls">
            {spend.modelCalls} · {spend.inputTokens + spend.outputTokens} tokens
          </Fact>
          <Fact label="cost" title={rolled ? "This run's model calls, then with its child runs' (as its budget counts them)" : undefined}>
            <span data-fact="cost">{usd(spend.costMicros)}</span>
            {rolled && <span data-fact="cost-with-children"> · {usd(rolled.costMicros)} with children</span>}
          </Fact>
          <Fact label="steps" title="Distinct steps the run started, and how many of them failed for good">
            <span data-fact="steps">{spend.steps}</span>
            {spend.failedSteps > 0 && (
              <span className="err" data-fact="failed-steps">
                {" "}
                · {spend.failedSteps} failed
              </span>
            )}
          </Fact>
          <Fact label="retries" title="Attempts beyond each step's first">
            <span data-fact="retries">{spend.retries}</span>
          </Fact>
          {r.leaseOwner && <Fact label="held by">{r.leaseOwner}</Fact>}
          {r.parentRunId && (
            <Fact label="parent">
              <Link href={runPath(r.parentRunId)}>{r.parentRunId}</Link>
            </Fact>
          )}
          {r.continuedFrom && (
            <Fact label="continues" title="The run this one continues (ctx.continueAsNew), e.g. a thread's earlier turns">
              <Link href={runPath(r.continuedFrom)}>{r.continuedFrom}</Link>
            </Fact>
          )}
          {r.continuedTo && (
            <Fact label="continued as" title="The run that continues this one (ctx.continueAsNew)">
              <Link href={runPath(r.continuedTo)}>{r.continuedTo}</Link>
            </Fact>
          )}
        </div>
      )}
      {r?.status === "suspended" && (
        <p className="waiting">
          <span className="icon-pause" aria-hidden="true" /> Waiting for {waitingText(r)}. It costs nothing while it waits.
        </p>
      )}
      {requests.data && requests.data.length > 0 && (
        <div className="cards">
          {requests.data.map((request) => (
            <div className="card question" key={request.requestId}>
              <div className="muted mono">{request.opKey}</div>
              <p className="question-text">{request.question}</p>
              <RequestContext context={request.context} />
              <AnswerForm request={request} onAnswered={refreshRequests} />
            </div>
          ))}
        </div>
      )}
      {r && r.waitingFor.some((w) => w.kind === "event") && (
        <SendEvent runId={runId} type={String((r.waitingFor.find((w) => w.kind === "event") as { type?: string }).type ?? "")} />
      )}
      {r && (
        <div className="io">
          <div>
            <h3>Input</h3>
            <JsonView value={r.input} max={300} />
          </div>
          {r.status === "completed" && (
            <div>
              <h3>Output</h3>
              <JsonView value={r.output} max={300} />
            </div>
          )}
          {r.error && (
            <div>
              <h3>Error</h3>
              <ErrorDetail error={r.error} />
            </div>
          )}
        </div>
      )}
      {costs.data && <RunCostsView costs={costs.data} />}
      {/* An agent's live output is the pending message of its transcript; any other run's stands alone. */}
      {partial && !agentRun && <LiveOutputView output={partial} />}
      <AgentPanel entries={entries} input={r?.input} partial={partial} />
      <h2>
        Journal <span className={`live ${live ? "on" : ""}`}>{live ? "● live" : r && isTerminal(r.status) ? "finished" : "reconnecting…"}</span>
      </h2>
      <ErrorBox error={streamError} />
      <JournalView entries={entries} runId={runId} />
      {/* Drawn only while open: a long journal's bars would otherwise be in the DOM, and re-rendered on every streamed batch. */}
      <details className="waterfall-box" data-waterfall-box onToggle={(e) => setWaterfallOpen(e.currentTarget.open)}>
        <summary>Waterfall: each op on a time axis</summary>
        {waterfallOpen && <Waterfall entries={entries} now={r?.finishedAt ? Date.parse(r.finishedAt) : Date.now()} />}
      </details>
    </section>
  );
}

/**
 * Whether the API said the run does not exist. By the error's code, not `isCairnError`: the bundle
 * minifies class names, and that check wants a name ending in "Error".
 */
function isNotFound(error: Error | undefined): boolean {
  return (error as { code?: unknown } | undefined)?.code === "RUN_NOT_FOUND";
}

function Fact({ label, title, children }: { label: string; title?: string; children: ReactNode }) {
  return (
    <div className="fact" title={title}>
      <div className="fact-label">{label}</div>
      <div className="fact-value">{children}</div>
    </div>
  );
}

/**
 * The journal through the run's SSE stream: every entry once, in order, resumed after the last
 * seq seen (the client reconnects by itself). A run retried after it failed opens a new stream.
 */
function useLiveJournal(runId: string, run: ApiRun | undefined) {
  const [entries, setEntries] = useState<ApiJournalEntry[]>([]);
  const [live, setLive] = useState(false);
  const [error, setError] = useState<Error>();
  const [generation, setGeneration] = useState(0);
  const lastSeq = useRef(0);
  // A running model call's output so far (stream deltas, not journaled): shown until its step's entry comes.
  const [partial, setPartial] = useState<LiveOutput>();

  useEffect(() => {
    setEntries([]);
    lastSeq.current = 0;
  }, [runId]);

  // The stream opens once the run is known to exist (an unknown id gets one "Run not found").
  const known = run !== undefined;
  useEffect(() => {
    if (!known) return;
    const abort = new AbortController();
    setLive(true);
    setError(undefined);
    let buffer: ApiJournalEntry[] = [];
    let flush: number | undefined;
    let inCatchUp = false;
    api
      .stream(runId, {
        after: lastSeq.current,
        // Large entries come as previews with a button that loads them: a journal of big values stays light in the tab.
        preview: true,
        signal: abort.signal,
        onReconnect: () => setLive(false),
        onDelta: (delta) => {
          const piece = livePiece(delta.data);
          // A run of catchUp deltas (the output so far, on each connection) replaces what was shown.
          const startsOver = delta.catchUp === true && !inCatchUp;
          inCatchUp = delta.catchUp === true;
          if (!piece) return;
          setPartial((previous) => addPiece(previous, delta.opKey, delta.attempt, piece, startsOver));
        },
        onEntry: (entry) => {
          inCatchUp = false;
          if (entry.kind === "step.completed" || entry.kind === "step.failed")
            setPartial((previous) => (previous?.opKey === entry.opKey ? undefined : previous));
          lastSeq.current = entry.seq;
          buffer.push(entry);
          setLive(true);
          flush ??= window.setTimeout(() => {
            const batch = buffer;
            buffer = [];
            flush = undefined;
            setEntries((previous) => [...previous, ...batch]);
          }, 30);
        },
      })
      .then(() => setLive(false))
      .catch((caught: Error) => {
        setLive(false);
        setError(caught);
      });
    return () => {
      abort.abort();
      window.clearTimeout(flush);
      const batch = buffer;
      if (batch.length) setEntries((previous) => [...previous, ...batch]);
    };
  }, [runId, generation, known]);

  // The stream ended with the run, but the run went on (retried): follow it again.
  useEffect(() => {
    if (run && !live && !isTerminal(run.status) && run.entries > lastSeq.current) setGeneration((n) => n + 1);
  }, [run, live]);

  return { entries, live, error, partial };
}

function SendEvent({ runId, type: waitingType }: { runId: string; type: string }) {
  const [type, setType] = useState(waitingType);
  const [payload, setPayload] = useState("");
  const [status, setStatus] = useState<string>();
  const send = async () => {
    let parsed: unknown;
    try {
      parsed = payload.trim() ? JSON.parse(payload) : undefined;
    } catch {
      setStatus("The payload must be JSON.");
      return;
    }
    try {
      await api.sendEvent(runId, { type, ...(parsed === undefined ? {} : { payload: parsed }) });
      setStatus("sent");
      setPayload("");
    } catch (caught) {
      setStatus((caught as Error).message);
    }
  };
  return (
    <form
      className="card send-event"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <h3>Send an event</h3>
      <input aria-label="event type" value={type} onChange={(e) => setType(e.target.value)} className="short" />
      <input aria-label="event payload" placeholder='payload (JSON), e.g. {"approved":true}' value={payload} onChange={(e) => setPayload(e.target.value)} />
      <button className="primary" type="submit">
        Send
      </button>
      {status && <span className="muted">{status}</span>}
    </form>
  );
}
