import type { ApiJournalEntry } from "cairn/client";
import { createContext, Fragment, useContext, useMemo, useState } from "react";
import { api } from "../api";
import { clock, dateTime, duration, instantOf, modelCallOf, usd } from "../format";
import { JsonView } from "./json-view";
import { Link } from "./link";
import { runPath } from "../router";

interface SerializedError {
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
}

/** How long each step attempt took: `step.completed` / `step.failed` seq → ms since its `step.started`. */
export function stepDurations(entries: ApiJournalEntry[]): Map<number, number> {
  const startedAt = new Map<string, number>();
  const took = new Map<number, number>();
  for (const entry of entries) {
    const at = Date.parse(entry.at);
    if (entry.kind === "step.started" && entry.opKey) startedAt.set(entry.opKey, at);
    if ((entry.kind === "step.completed" || entry.kind === "step.failed") && entry.opKey && startedAt.has(entry.opKey))
      took.set(entry.seq, at - startedAt.get(entry.opKey)!);
  }
  return took;
}

/** The journal as a timeline: one row per entry, newest at the bottom, with what each one means. */
export function Timeline({ entries, runId }: { entries: ApiJournalEntry[]; runId?: string }) {
  const first = entries[0] ? Date.parse(entries[0].at) : 0;
  const took = stepDurations(entries);
  const owners = useMemo(() => traceOwners(entries), [entries]);
  return (
    <TraceOwners.Provider value={owners}>
      <ol className="timeline" aria-label="journal">
        {entries.map((entry) => (
          <EntryRow key={entry.seq} entry={entry} first={first} took={took.get(entry.seq)} runId={runId} />
        ))}
      </ol>
    </TraceOwners.Provider>
  );
}

/** One journal entry as a row of the timeline. */
export function EntryRow({
  entry,
  first,
  took,
  runId,
  className = "",
}: {
  entry: ApiJournalEntry;
  first: number;
  took: number | undefined;
  runId?: string | undefined;
  className?: string;
}) {
  const at = Date.parse(entry.at);
  return (
    <li className={`entry kind-${entry.kind.split(".")[0]} ${entry.kind.replace(".", "-")} ${className}`} data-seq={entry.seq} data-kind={entry.kind}>
      <span className="seq">{entry.seq}</span>
      <span className="time" title={dateTime(entry.at)}>
        {clock(entry.at)}
        <span className="muted"> +{duration(at - first)}</span>
      </span>
      <span className="kind">
        <BreakAfterDots text={entry.kind} />
      </span>
      <span className="op mono">{entry.opKey ? <BreakAfterDots text={entry.opKey} at="/" /> : ""}</span>
      <span className="what">
        {entry.elided !== undefined && runId !== undefined ? <ElidedEntry entry={entry} runId={runId} /> : <EntryDetail entry={entry} runId={runId} />}
        {took !== undefined && <span className="muted"> · {duration(took)}</span>}
      </span>
    </li>
  );
}

/** Bytes as people read them: 12.3 KiB, 1.0 MiB. */
function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/**
 * An entry the stream sent as a preview (its data was too large to send with every entry): its size
 * and a button that loads it whole from `GET /runs/:id/journal/:seq`, then shows it as any entry.
 */
function ElidedEntry({ entry, runId }: { entry: ApiJournalEntry; runId: string }) {
  const [whole, setWhole] = useState<ApiJournalEntry>();
  const [state, setState] = useState<"idle" | "loading" | string>("idle");
  if (whole) return <EntryDetail entry={whole} runId={runId} />;
  return (
    <span className="elided" data-elided={entry.elided}>
      <span className="muted">value of {size(entry.elided ?? 0)} not loaded </span>
      <button
        type="button"
        className="link-button"
        disabled={state === "loading"}
        onClick={() => {
          setState("loading");
          api.journalEntry(runId, entry.seq).then(setWhole, (error: Error) => setState(error.message));
        }}
      >
        {state === "loading" ? "Loading…" : "Load whole value"}
      </button>
      {state !== "idle" && state !== "loading" && <span className="error"> {state}</span>}
    </span>
  );
}

/** `text` with a line-break opportunity after each `at` (a kind's dot, an op key's slash), where it reads best if the column is too narrow. */
function BreakAfterDots({ text, at = "." }: { text: string; at?: string }) {
  const parts = text.split(at);
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {part}
          {i < parts.length - 1 && (
            <>
              {at}
              <wbr />
            </>
          )}
        </Fragment>
      ))}
    </>
  );
}

function EntryDetail({ entry, runId }: { entry: ApiJournalEntry; runId: string | undefined }) {
  const data = (entry.data ?? {}) as Record<string, unknown>;
  switch (entry.kind) {
    case "run.created":
      return (
        <>
          {String(data.workflow)} v{String(data.version)} <JsonView value={data.input} />
        </>
      );
    case "run.claimed":
      return (
        <>
          by worker <span className="mono">{String(data.workerId)}</span> (epoch {String(data.epoch)}, from {String(data.from)})
        </>
      );
    case "run.suspended":
      return <>waits for {(data.waitingFor as { kind: string; opKey: string }[] | undefined)?.map((w) => `${w.kind} ${w.opKey}`).join(", ") || "nothing"}</>;
    case "run.completed":
      return <JsonView value={data.output} />;
    case "run.failed":
    case "child.failed":
    case "run.compensated":
    case "run.compensation_failed":
    case "compensation.failed":
    case "resource.release_failed":
      return <ErrorDetail error={data.error as SerializedError} seq={entry.seq} />;
    case "run.cancelled":
    case "run.cancelling":
      return <>{data.reason ? String(data.reason) : "cancelled"}</>;
    case "saga.compensating":
      return (
        <>
          {String(data.reason)}: <ErrorDetail error={data.error as SerializedError} seq={entry.seq} />
        </>
      );
    case "compensation.started":
    case "compensation.completed":
      return <>attempt {String(data.attempt)}</>;
    case "resource.releasing":
    case "resource.released":
      return (
        <>
          attempt {String(data.attempt)} · by {String(data.by)}
        </>
      );
    case "step.started": {
      const intent = data.intent as Record<string, unknown> | undefined;
      return (
        <>
          attempt {String(data.attempt)}
          {data.recovered ? " (recovered after a crash)" : ""}
          {intent?.tool !== undefined && (
            <span className="tool-call" data-tool={String(intent.tool)}>
              {" "}
              · tool <b>{String(intent.tool)}</b>
              {intent.toolCallId !== undefined && (
                <>
                  {" "}
                  call <span className="mono">{String(intent.toolCallId)}</span>
                </>
              )}
              {intent.argumentsHash !== undefined && (
                <span className="muted">
                  {" "}
                  · args{" "}
                  <span className="mono" title={String(intent.argumentsHash)}>
                    {String(intent.argumentsHash).slice(0, 12)}
                  </span>
                </span>
              )}
              {runId && intent.toolCallId !== undefined && (
                <span className="muted">
                  {" "}
                  · idempotency key{" "}
                  <span className="mono">
                    {typeof intent.idempotencyKey === "string" ? intent.idempotencyKey : `${runId}:tool:${String(intent.toolCallId)}`}
                  </span>
                </span>
              )}
              {intent.approvedBy !== undefined && (
                <>
                  {" "}
                  · approved by <b>{String(intent.approvedBy)}</b>
                </>
              )}
              {intent.effect !== undefined && (
                <>
                  {" "}
                  · effect <b>{String(intent.effect)}</b>
                </>
              )}
            </span>
          )}
          {intent?.model !== undefined && (
            <>
              {" "}
              · model <b>{String(intent.model)}</b>
            </>
          )}
          {intent && intent.tool === undefined && intent.model === undefined && (
            <>
              {" "}
              · <JsonView value={intent} max={80} />
            </>
          )}
        </>
      );
    }
    case "step.completed": {
      const call = modelCallOf(entry);
      return (
        <>
          {call && (
            <span className="tokens">
              {call.inputTokens}+{call.outputTokens} tokens · {usd(call.costMicros)} ·{" "}
            </span>
          )}
          {data.via ? `(via ${String(data.via)}) ` : ""}
          <JsonView value={data.result} />
        </>
      );
    }
    case "step.failed":
      return (
        <>
          attempt {String(data.attempt)}
          {data.final ? ", final" : typeof data.retryAt === "number" ? `, retry at ${dateTime(data.retryAt, { short: true })}` : ""} ·{" "}
          <ErrorDetail error={data.error as SerializedError} seq={entry.seq} />
        </>
      );
    case "step.reconciled":
      return (
        <>
          {String(data.action)} via {String(data.via)}
        </>
      );
    case "sleep.started":
      return <>until {dateTime(Number(data.wakeAt), { short: true })}</>;
    case "event.waiting":
      return (
        <>
          for “{String(data.type)}”{typeof data.timeoutAt === "number" ? `, until ${dateTime(data.timeoutAt, { short: true })}` : ""}
        </>
      );
    case "event.received":
      return (
        <>
          “{String(data.type)}” <JsonView value={data.payload} />
        </>
      );
    case "human.requested":
      return (
        <>
          <b>{String(data.question)}</b>
          {(data.options as string[] | undefined)?.length ? <span className="muted"> [{(data.options as string[]).join(" / ")}]</span> : null}
          {data.input ? <span className="muted"> · asks for {schemaSummary(data.input)}</span> : null}
        </>
      );
    case "human.answered": {
      const answer = (data.answer ?? {}) as { action?: string; option?: string; value?: unknown; by?: string; message?: string };
      return (
        <>
          {answer.action === "answer" ? answer.option !== undefined && <b>{answer.option}</b> : <b>{answer.action}</b>}
          {answer.value !== undefined && (
            <>
              {answer.action === "answer" && answer.option === undefined ? "" : " "}
              <JsonView value={answer.value} />
            </>
          )}
          {answer.by ? ` by ${answer.by}` : ""}
          {answer.message ? ` — “${answer.message}”` : ""}
        </>
      );
    }
    case "human.timedout":
      return <>{timedOutText(data)}</>;
    case "child.started":
      return (
        <>
          {String(data.workflow)} as{" "}
          <Link href={runPath(String(data.childRunId))} className="mono" data-child-run={String(data.childRunId)}>
            {String(data.childRunId)}
          </Link>
        </>
      );
    case "child.completed":
      return <JsonView value={data.output} />;
    case "value.recorded": {
      const instant = instantOf(data.value);
      return instant === undefined ? (
        <JsonView value={data.value} />
      ) : (
        <time dateTime={new Date(instant).toISOString()} title={JSON.stringify(data.value)} data-recorded-time>
          {dateTime(instant)}
        </time>
      );
    }
    case "loop.snapshot":
      return <>snapshot before iteration {String(data.iteration)}</>;
    case "loop.completed":
      return <>{String(data.iterations)} iterations</>;
    default:
      return Object.keys(data).length ? <JsonView value={data} /> : null;
  }
}

/**
 * Which entry shows each stack trace: the first that carries it. A saga journals one failure as
 * `step.failed`, `saga.compensating` and `run.compensated`; the later ones point to the first.
 */
export const TraceOwners = createContext<Map<string, number>>(new Map());

/**
 * Stack trace → seq of the entry that shows it: the first whose error carries it, or, for an error
 * that wraps an earlier one (its message quotes the earlier `Name: message`, as a saga's
 * `StepFailedError` does), the earlier error's entry.
 */
export function traceOwners(entries: ApiJournalEntry[]): Map<string, number> {
  const owners = new Map<string, number>();
  const heads: { head: string; seq: number }[] = [];
  for (const entry of entries) {
    const error = (entry.data as { error?: SerializedError } | null)?.error;
    const stack = error?.stack;
    if (typeof stack !== "string" || owners.has(stack)) continue;
    const wrapped = heads.find(({ head }) => (error?.message ?? "").includes(head));
    owners.set(stack, wrapped?.seq ?? entry.seq);
    if (!wrapped && error?.message) heads.push({ head: `${error.name ?? "Error"}: ${error.message}`, seq: entry.seq });
  }
  return owners;
}

/**
 * A frame of the engine rather than of the user's code: Node's internals, installed packages, and
 * Cairn's own modules (its built `dist/src/…` or its `src/{engine,core,store,…}` sources).
 */
export function isEngineFrame(line: string): boolean {
  return (
    /\(?node:/.test(line) ||
    /[\\/]node_modules[\\/]/.test(line) ||
    /[\\/]dist[\\/]src[\\/]/.test(line) ||
    /[\\/]src[\\/](engine|core|store|agent|server|client|testing|cli)[\\/][^\s]*\.[cm]?[jt]s/.test(line)
  );
}

/** A stack split into its head (message lines), the user's frames and the engine's frames, each in the order thrown. */
export function splitStack(stack: string): { head: string[]; user: string[]; engine: string[] } {
  const lines = stack.split("\n");
  const firstFrame = lines.findIndex((line) => /^\s+at\s/.test(line));
  const head = firstFrame === -1 ? lines : lines.slice(0, firstFrame);
  const frames = firstFrame === -1 ? [] : lines.slice(firstFrame).filter((line) => line.trim() !== "");
  return { head, user: frames.filter((line) => !isEngineFrame(line)), engine: frames.filter(isEngineFrame) };
}

/** An error: its name, code and message, and its stack with the user's frames first and the engine's folded. */
export function ErrorDetail({ error, seq }: { error: SerializedError | undefined; seq?: number }) {
  const owners = useContext(TraceOwners);
  if (!error) return null;
  const head = `${error.name ?? "Error"}${error.code ? ` [${error.code}]` : ""}: ${error.message ?? ""}`;
  if (!error.stack) return <span className="err">{head}</span>;
  const owner = seq === undefined ? undefined : owners.get(error.stack);
  if (owner !== undefined && owner !== seq)
    return (
      <span className="err" data-trace-ref={owner}>
        {head} <span className="muted">(trace at #{owner})</span>
      </span>
    );
  return (
    <details className="err">
      <summary>{head}</summary>
      <StackTrace stack={error.stack} />
    </details>
  );
}

/** A stack trace with the user's frames shown and the engine's behind a toggle. */
export function StackTrace({ stack }: { stack: string }) {
  const { user, engine } = splitStack(stack);
  const [open, setOpen] = useState(false);
  return (
    <div className="stack" data-stack>
      <pre data-user-frames>{user.length ? user.map((line) => line.trim()).join("\n") : "(no frames in your code)"}</pre>
      {engine.length > 0 && (
        <>
          <button type="button" className="link-button" aria-expanded={open} onClick={() => setOpen(!open)} data-engine-toggle>
            {open ? "hide" : "show"} {engine.length} engine frame{engine.length === 1 ? "" : "s"}
          </button>
          {open && (
            <pre className="engine-frames" data-engine-frames>
              {engine.map((line) => line.trim()).join("\n")}
            </pre>
          )}
        </>
      )}
    </div>
  );
}

/** What a timed-out human request did: chose an option, cancelled the run, or failed the step. */
function timedOutText(data: Record<string, unknown>): string {
  if (data.escalation === "choose") return `timed out, chose ${String(data.option)}`;
  if (data.escalation === "cancel") return "timed out, run cancelled";
  return "timed out, failed";
}

/** An input schema in a few words: an object's property names, else its type. */
function schemaSummary(schema: unknown): string {
  const s = schema as { type?: unknown; properties?: Record<string, unknown> };
  if (s.properties && typeof s.properties === "object") return `{ ${Object.keys(s.properties).join(", ")} }`;
  return typeof s.type === "string" ? `a ${s.type}` : "a value";
}
