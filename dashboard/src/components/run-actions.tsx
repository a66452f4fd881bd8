import { isFailed, isTerminal, type ApiJournalEntry, type ApiRun } from "cairn/client";
import { useMemo, useState } from "react";
import { api, downloadRunExport } from "../api";
import { navigate, runPath } from "../router";

type Panel = "cancel" | "fork" | "rerun" | undefined;

/**
 * What an operator can do to a run, through the API (each action audited there): cancel with a
 * reason, retry a failed run, fork it at an entry with one step's result patched, re-run it with the
 * same or an edited input, and download its journal (the export of `GET /runs/:id/export`).
 */
export function RunActions({ run, entries, onDone }: { run: ApiRun; entries: ApiJournalEntry[]; onDone: () => void }) {
  const [error, setError] = useState<string>();
  const [panel, setPanel] = useState<Panel>();
  const [busy, setBusy] = useState(false);
  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    setBusy(true);
    try {
      await action();
      setPanel(undefined);
      onDone();
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (next: Panel) => {
    setError(undefined);
    setPanel((current) => (current === next ? undefined : next));
  };
  const download = () =>
    void act(async () => {
      const blob = await downloadRunExport(run.runId, !isTerminal(run.status));
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = `${run.runId.replace(/[^a-zA-Z0-9._-]+/g, "_")}.journal.json`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    });
  return (
    <div className="run-actions">
      <div className="actions">
        {!isTerminal(run.status) && (
          <button className="danger" aria-expanded={panel === "cancel"} onClick={() => toggle("cancel")}>
            Cancel…
          </button>
        )}
        {isFailed(run.status) && (
          <button disabled={busy} onClick={() => void act(() => api.retry(run.runId))}>
            Retry
          </button>
        )}
        <button aria-expanded={panel === "rerun"} onClick={() => toggle("rerun")}>
          Re-run…
        </button>
        <button aria-expanded={panel === "fork"} onClick={() => toggle("fork")} disabled={entries.length === 0}>
          Fork…
        </button>
        <button disabled={busy} onClick={download} data-action="download">
          Download journal
        </button>
      </div>
      {panel === "cancel" && <CancelForm busy={busy} onCancel={(reason) => void act(() => api.cancel(run.runId, reason || undefined))} />}
      {panel === "rerun" && (
        <RerunForm
          run={run}
          busy={busy}
          onStart={(input) =>
            void act(async () => {
              const started = await api.startRun({ workflow: run.workflow, version: run.version, input });
              navigate(runPath(started.run.runId));
            })
          }
        />
      )}
      {panel === "fork" && (
        <ForkForm
          entries={entries}
          busy={busy}
          onFork={(body) =>
            void act(async () => {
              const forked = await api.fork(run.runId, body);
              navigate(runPath(forked.run.runId));
            })
          }
        />
      )}
      {error && (
        <div className="error-box" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

function CancelForm({ busy, onCancel }: { busy: boolean; onCancel: (reason: string) => void }) {
  const [reason, setReason] = useState("");
  return (
    <form
      className="card action-form"
      aria-label="cancel the run"
      onSubmit={(event) => {
        event.preventDefault();
        onCancel(reason.trim());
      }}
    >
      <label>
        reason{" "}
        <input
          aria-label="cancel reason"
          placeholder="why (kept in the journal and the audit log)"
          value={reason}
          onChange={(e) => setReason(e.target.value)}
        />
      </label>
      <button className="danger" type="submit" disabled={busy}>
        Yes, cancel the run
      </button>
    </form>
  );
}

/** JSON text of a value for an editor. */
function asJson(value: unknown): string {
  return value === undefined ? "" : JSON.stringify(value, null, 2);
}

/** Parses an editor's JSON: the value, or the error to show. */
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (!text.trim()) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (caught) {
    return { ok: false, error: `Not JSON: ${(caught as Error).message}` };
  }
}

function RerunForm({ run, busy, onStart }: { run: ApiRun; busy: boolean; onStart: (input: unknown) => void }) {
  const [text, setText] = useState(() => asJson(run.input));
  const parsed = parseJson(text);
  const edited = parsed.ok && JSON.stringify(parsed.value) !== JSON.stringify(run.input ?? null);
  return (
    <form
      className="card action-form"
      aria-label="re-run"
      onSubmit={(event) => {
        event.preventDefault();
        if (parsed.ok) onStart(parsed.value);
      }}
    >
      <p className="muted">
        A new run of {run.workflow} v{run.version} with this input ({edited ? "edited" : "the same as this run's"}).
      </p>
      <textarea aria-label="re-run input" className="mono" rows={6} value={text} onChange={(e) => setText(e.target.value)} spellCheck={false} />
      {!parsed.ok && <div className="err">{parsed.error}</div>}
      <button className="primary" type="submit" disabled={busy || !parsed.ok}>
        {edited ? "Start with the edited input" : "Start with the same input"}
      </button>
    </form>
  );
}

/**
 * `POST /runs/:id/fork`: keep the journal up to an entry (`atSeq`) and run the rest live; optionally
 * the result of one completed step at or before it replaced (`patch`), edited as JSON.
 */
function ForkForm({
  entries,
  busy,
  onFork,
}: {
  entries: ApiJournalEntry[];
  busy: boolean;
  onFork: (body: { atSeq: number; patch?: { seq: number; result: unknown } }) => void;
}) {
  const lastSeq = entries.at(-1)?.seq ?? 1;
  const [atSeq, setAtSeq] = useState(lastSeq);
  const completed = useMemo(() => entries.filter((entry) => entry.kind === "step.completed" && entry.seq <= atSeq), [entries, atSeq]);
  const [patchSeq, setPatchSeq] = useState<number>();
  const [result, setResult] = useState("");
  const patched = completed.find((entry) => entry.seq === patchSeq);
  const parsed = parseJson(result);
  const choosePatch = (seq: number | undefined) => {
    setPatchSeq(seq);
    const entry = completed.find((e) => e.seq === seq);
    setResult(entry ? asJson((entry.data as { result?: unknown }).result ?? null) : "");
  };
  const valid = Number.isSafeInteger(atSeq) && atSeq >= 1 && atSeq <= lastSeq && (!patched || parsed.ok);
  return (
    <form
      className="card action-form"
      aria-label="fork the run"
      onSubmit={(event) => {
        event.preventDefault();
        if (!valid) return;
        onFork({ atSeq, ...(patched && parsed.ok ? { patch: { seq: patched.seq, result: parsed.value } } : {}) });
      }}
    >
      <p className="muted">A new run that replays this journal up to an entry and runs the rest live; one step's result can be changed.</p>
      <label>
        keep entries up to seq{" "}
        <input
          aria-label="fork at seq"
          type="number"
          min={1}
          max={lastSeq}
          className="short"
          value={atSeq}
          onChange={(e) => {
            setAtSeq(Number(e.target.value));
            choosePatch(undefined);
          }}
        />
      </label>
      <label>
        patch the result of{" "}
        <select aria-label="patch step" value={patchSeq ?? ""} onChange={(e) => choosePatch(e.target.value === "" ? undefined : Number(e.target.value))}>
          <option value="">no step (replay as journaled)</option>
          {completed.map((entry) => (
            <option key={entry.seq} value={entry.seq}>
              #{entry.seq} {entry.opKey}
            </option>
          ))}
        </select>
      </label>
      {patched && (
        <>
          <textarea aria-label="patched result" className="mono" rows={6} value={result} onChange={(e) => setResult(e.target.value)} spellCheck={false} />
          {!parsed.ok && <div className="err">{parsed.error}</div>}
        </>
      )}
      <button className="primary" type="submit" disabled={busy || !valid}>
        Fork
      </button>
    </form>
  );
}
