import type { ApiJournalEntry } from "cairn/client";
import { useMemo, useState } from "react";
import { duration } from "../format";
import { EntryRow, Timeline, TraceOwners, stepDurations, traceOwners } from "./timeline";
import { WindowedList } from "./windowed-list";

/** Journals longer than this are drawn in a window (only the rows in view are in the DOM). */
export const WINDOW_FROM = 300;
const ROW_HEIGHT = 32;

/** One op of the journal collapsed to a row: what it meant to do, how many attempts, how it ended, how long it took. */
export interface OpRow {
  opKey: string;
  firstSeq: number;
  kinds: string;
  intent: string;
  attempts: number;
  outcome: "completed" | "failed" | "running" | "waiting" | "done";
  durationMs: number | null;
}

/** Collapses entries with an op key to one row per op, in the order each op first appears. */
export function opRows(entries: ApiJournalEntry[]): OpRow[] {
  const rows = new Map<string, OpRow & { startedAt: number }>();
  for (const entry of entries) {
    if (!entry.opKey) continue;
    const at = Date.parse(entry.at);
    let row = rows.get(entry.opKey);
    if (!row) {
      row = {
        opKey: entry.opKey,
        firstSeq: entry.seq,
        kinds: entry.kind.split(".")[0]!,
        intent: "",
        attempts: 0,
        outcome: "running",
        durationMs: null,
        startedAt: at,
      };
      rows.set(entry.opKey, row);
    }
    const data = (entry.data ?? {}) as { intent?: Record<string, unknown>; final?: boolean };
    switch (entry.kind) {
      case "step.started":
        row.attempts++;
        if (data.intent) row.intent = intentText(data.intent);
        row.outcome = "running";
        break;
      case "step.completed":
        row.outcome = "completed";
        row.durationMs = at - row.startedAt;
        break;
      case "step.failed":
        row.outcome = data.final ? "failed" : "running";
        row.durationMs = at - row.startedAt;
        break;
      default:
        if (/\.(waiting|requested|started)$/.test(entry.kind)) row.outcome = "waiting";
        else {
          row.outcome = /failed|timedout/.test(entry.kind) ? "failed" : "done";
          row.durationMs = at - row.startedAt;
        }
    }
  }
  return [...rows.values()];
}

function intentText(intent: Record<string, unknown>): string {
  if (intent.tool !== undefined) return `tool ${String(intent.tool)}`;
  if (intent.model !== undefined) return `model ${String(intent.model)}`;
  try {
    return JSON.stringify(intent).slice(0, 80);
  } catch {
    return "";
  }
}

/**
 * The run's journal with a filter by entry kind and a toggle to one row per op. Long journals are
 * windowed: a 5,000-entry run renders a few dozen rows, and a streamed batch re-renders only those.
 */
export function JournalView({ entries, runId }: { entries: ApiJournalEntry[]; runId: string }) {
  const [kind, setKind] = useState("");
  const [byOp, setByOp] = useState(false);
  const kinds = useMemo(() => [...new Set(entries.map((entry) => entry.kind))].sort(), [entries]);
  const shown = useMemo(() => (kind ? entries.filter((entry) => entry.kind === kind) : entries), [entries, kind]);
  const took = useMemo(() => stepDurations(entries), [entries]);
  const owners = useMemo(() => traceOwners(shown), [shown]);
  const ops = useMemo(() => (byOp ? opRows(entries) : []), [entries, byOp]);
  const first = entries[0] ? Date.parse(entries[0].at) : 0;

  return (
    <>
      <div className="journal-controls">
        <label>
          Kind{" "}
          <select aria-label="entry kind" value={kind} onChange={(event) => setKind(event.target.value)} disabled={byOp}>
            <option value="">all kinds</option>
            {kinds.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button type="button" aria-pressed={byOp} className={`chip ${byOp ? "on" : ""}`} onClick={() => setByOp(!byOp)}>
          One row per op
        </button>
        <span className="muted" data-journal-count>
          {byOp ? `${ops.length} ops` : kind ? `${shown.length} of ${entries.length} entries` : `${entries.length} entries`}
        </span>
      </div>
      {byOp ? (
        <WindowedList
          key="ops"
          count={ops.length}
          rowHeight={ROW_HEIGHT}
          label="journal by op"
          row={(i) => {
            const op = ops[i]!;
            return (
              <li key={op.opKey} className={`entry op-row outcome-${op.outcome}`} data-op-row={op.opKey}>
                <span className="seq">{op.firstSeq}</span>
                <span className="op mono">{op.opKey}</span>
                <span className="kind">{op.kinds}</span>
                <span className="what">
                  {op.attempts > 0 && `${op.attempts} attempt${op.attempts === 1 ? "" : "s"} · `}
                  <b>{op.outcome}</b>
                  {op.durationMs !== null && ` · ${duration(op.durationMs)}`}
                  {op.intent && <span className="muted"> · {op.intent}</span>}
                </span>
              </li>
            );
          }}
        />
      ) : shown.length <= WINDOW_FROM ? (
        <Timeline entries={shown} runId={runId} />
      ) : (
        <TraceOwners.Provider value={owners}>
          <WindowedList
            key="entries"
            count={shown.length}
            rowHeight={ROW_HEIGHT}
            label="journal"
            follow
            row={(i) => {
              const entry = shown[i]!;
              return <EntryRow key={entry.seq} entry={entry} first={first} took={took.get(entry.seq)} runId={runId} className="one-line" />;
            }}
          />
        </TraceOwners.Provider>
      )}
    </>
  );
}
