import type { RunEntriesQuery, RunEntry } from "../../core/store.js";
import { compareText } from "../common/list-query.js";
import { runEntriesStart } from "../common/run-entries.js";
import type { MemoryTables } from "./memory-tables.js";

/** {@link Store.listRunEntries} over the memory store's tables. */
export function listRunEntries(t: MemoryTables, query: RunEntriesQuery): RunEntry[] {
  const start = runEntriesStart(query);
  const runs = [...t.runs.values()]
    .filter((run) => run.createdAt > start.createdAt || (run.createdAt === start.createdAt && compareText(run.runId, start.runId) >= 0))
    .sort((a, b) => a.createdAt - b.createdAt || compareText(a.runId, b.runId));
  const rows: RunEntry[] = [];
  for (const run of runs) {
    const minSeq = run.runId === start.runId && run.createdAt === start.createdAt ? start.seq : 0;
    for (const entry of t.journal.get(run.runId) ?? []) {
      if (entry.kind !== query.kind || entry.seq <= minSeq) continue;
      rows.push({ entry: { ...entry }, workflow: run.workflow, parentRunId: run.parentRunId, createdAt: run.createdAt });
      if (rows.length === start.limit) return rows;
    }
  }
  return rows;
}
