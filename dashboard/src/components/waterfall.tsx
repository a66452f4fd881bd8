import type { ApiJournalEntry } from "cairn/client";
import { useMemo } from "react";
import { duration } from "../format";

/** One piece of an op's bar: an attempt (ok or failed), a retry's wait, or a wait for time, an event, a person or a child. */
interface Segment {
  kind: "attempt" | "failed" | "retry-wait" | "wait";
  from: number;
  to: number | undefined;
  label: string;
}
interface OpRow {
  opKey: string;
  segments: Segment[];
}

const WAIT_START: Record<string, string> = { "sleep.started": "sleep", "event.waiting": "event", "human.requested": "person", "child.started": "child run" };
const WAIT_END = new Set(["sleep.completed", "event.received", "event.timedout", "human.answered", "human.timedout", "child.completed", "child.failed"]);

/** The ops of a journal as rows of segments on one time axis. */
export function waterfallRows(entries: readonly ApiJournalEntry[]): OpRow[] {
  const rows = new Map<string, OpRow>();
  const row = (opKey: string) => {
    let found = rows.get(opKey);
    if (!found) rows.set(opKey, (found = { opKey, segments: [] }));
    return found;
  };
  for (const entry of entries) {
    if (!entry.opKey) continue;
    const at = Date.parse(entry.at);
    const r = row(entry.opKey);
    const open = r.segments.at(-1);
    if (entry.kind === "step.started") {
      if (open && open.to === undefined) open.to = at; // a crash left it open, or a retry wait ends
      const attempt = r.segments.filter((s) => s.kind !== "retry-wait").length + 1;
      r.segments.push({ kind: "attempt", from: at, to: undefined, label: `attempt ${attempt}` });
    } else if (entry.kind === "step.completed" && open?.to === undefined && open) {
      open.to = at;
    } else if (entry.kind === "step.failed" && open && open.to === undefined) {
      open.to = at;
      open.kind = "failed";
      if (!(entry.data as { final?: boolean }).final) r.segments.push({ kind: "retry-wait", from: at, to: undefined, label: "retry wait" });
    } else if (WAIT_START[entry.kind]) {
      r.segments.push({ kind: "wait", from: at, to: undefined, label: `waits for a ${WAIT_START[entry.kind]}` });
    } else if (WAIT_END.has(entry.kind) && open && open.to === undefined) {
      open.to = at;
    }
  }
  return [...rows.values()].filter((r) => r.segments.length > 0);
}

/**
 * A run's ops as a waterfall: a bar per op on the run's time axis, its attempts (failed ones red),
 * the waits between retries (hatched) and its waits for a timer, an event, a person or a child.
 * A segment still open runs to `now`.
 */
export function Waterfall({ entries, now }: { entries: ApiJournalEntry[]; now: number }) {
  const rows = useMemo(() => waterfallRows(entries), [entries]);
  if (rows.length === 0 || entries.length === 0) return <p className="muted">No ops yet.</p>;
  const start = Date.parse(entries[0]!.at);
  const end = Math.max(now, Date.parse(entries.at(-1)!.at), start + 1);
  const span = end - start;
  const pct = (t: number) => `${(((t - start) / span) * 100).toFixed(3)}%`;
  return (
    <div className="waterfall" aria-label="waterfall" role="table">
      <div className="wf-axis" role="row">
        <span role="columnheader">op</span>
        <span role="columnheader" className="wf-scale">
          0 — {duration(span)}
        </span>
      </div>
      {rows.map((row) => (
        <div key={row.opKey} className="wf-row" role="row" data-wf-op={row.opKey}>
          <span className="wf-op mono" role="rowheader" title={row.opKey}>
            {row.opKey}
          </span>
          <span className="wf-track" role="cell">
            {row.segments.map((segment, i) => {
              const to = segment.to ?? end;
              const title = `${segment.label}: ${duration(to - segment.from)}${segment.to === undefined ? " so far" : ""}`;
              return (
                <span
                  key={i}
                  className={`wf-seg wf-${segment.kind}`}
                  data-wf-seg={segment.kind}
                  title={title}
                  role="img"
                  aria-label={title}
                  style={{ left: pct(segment.from), width: `max(2px, ${(((to - segment.from) / span) * 100).toFixed(3)}%)` }}
                />
              );
            })}
          </span>
        </div>
      ))}
    </div>
  );
}
