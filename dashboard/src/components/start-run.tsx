import { useMemo, useState } from "react";
import { api } from "../api";
import { usePolling } from "../hooks";
import { navigate, runPath } from "../router";

/** Starts a run of a workflow the live workers know, at the version chosen (`name@version` from GET /workers). */
export function StartRunForm() {
  const workers = usePolling(() => api.listWorkers(), 5000, []);
  const workflows = useMemo(() => [...new Set((workers.data ?? []).flatMap((worker) => worker.workflows))].sort(), [workers.data]);
  const [choice, setChoice] = useState("");
  const [input, setInput] = useState("{}");
  const [runId, setRunId] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const selected = choice || workflows[0] || "";

  let inputError: string | undefined;
  let parsed: unknown;
  if (input.trim()) {
    try {
      parsed = JSON.parse(input);
    } catch (caught) {
      inputError = `Input is not JSON: ${(caught as Error).message}`;
    }
  }

  const start = async () => {
    if (inputError || !selected) return;
    setBusy(true);
    setError(undefined);
    try {
      // A worker lists `name@version`: the run starts at the version chosen.
      const at = selected.lastIndexOf("@");
      const workflow = at > 0 ? selected.slice(0, at) : selected;
      const version = at > 0 ? selected.slice(at + 1) : undefined;
      const { run } = await api.startRun({
        workflow,
        ...(version ? { version } : {}),
        ...(parsed === undefined ? {} : { input: parsed }),
        ...(runId.trim() ? { runId: runId.trim() } : {}),
      });
      navigate(runPath(run.runId));
    } catch (caught) {
      setError((caught as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="card start-run"
      aria-label="start a run"
      onSubmit={(event) => {
        event.preventDefault();
        void start();
      }}
    >
      <h3>Start a run</h3>
      {workers.data && workflows.length === 0 && <p className="muted">No live worker announces a workflow: start one (`cairn worker`).</p>}
      <label>
        workflow{" "}
        <select aria-label="workflow" value={selected} onChange={(e) => setChoice(e.target.value)}>
          {workflows.map((workflow) => (
            <option key={workflow} value={workflow}>
              {workflow}
            </option>
          ))}
        </select>
      </label>
      <label>
        run id <input aria-label="run id" placeholder="optional" value={runId} onChange={(e) => setRunId(e.target.value)} className="short" />
      </label>
      <textarea aria-label="run input" rows={4} value={input} onChange={(e) => setInput(e.target.value)} spellCheck={false} className="mono" />
      {inputError && <div className="err">{inputError}</div>}
      <button className="primary" type="submit" disabled={busy || !!inputError || !selected}>
        Start
      </button>
      {error && <span className="err">{error}</span>}
    </form>
  );
}
