/**
 * Model spend by run since a time, for the spend rules: one keyset-paged pass over the completed
 * steps of the runs created since then (the store's `listRunEntries`, served by the runs' createdAt
 * index), bounded like the overview's spend figures.
 */
import { decode } from "../../core/serialize.js";
import type { RunStore } from "../../core/store.js";

/** The most step entries one evaluation reads. */
export const MAX_SPEND_ENTRIES = 50_000;

/** One run's own model spend. */
export interface RunSpend {
  runId: string;
  workflow: string;
  parentRunId: string | null;
  createdAt: number;
  costMicros: number;
}

/** What {@link readSpend} found. */
export interface SpendByRun {
  runs: Map<string, RunSpend>;
  /** More entries than {@link MAX_SPEND_ENTRIES}: the newest runs are missing. */
  truncated: boolean;
}

/** The cost an agent's model step journals with its result (micro-dollars), or 0. */
export function modelCostMicros(payload: string): number {
  let data: unknown;
  try {
    data = decode(payload);
  } catch {
    return 0;
  }
  const cost = ((data as { result?: unknown } | null)?.result as { costMicros?: unknown } | null | undefined)?.costMicros;
  return typeof cost === "number" && Number.isFinite(cost) && cost > 0 ? cost : 0;
}

/** The model spend of every run created at or after `since` that has any. */
export async function readSpend(store: Pick<RunStore, "listRunEntries">, since: number): Promise<SpendByRun> {
  const runs = new Map<string, RunSpend>();
  let after: { createdAt: number; runId: string; seq: number } | undefined;
  let read = 0;
  for (;;) {
    const rows = await store.listRunEntries({ kind: "step.completed", createdAfter: since, limit: 1000, ...(after ? { after } : {}) });
    for (const row of rows) {
      const cost = modelCostMicros(row.entry.payload);
      if (cost === 0) continue;
      const run = runs.get(row.entry.runId) ?? {
        runId: row.entry.runId,
        workflow: row.workflow,
        parentRunId: row.parentRunId,
        createdAt: row.createdAt,
        costMicros: 0,
      };
      run.costMicros += cost;
      runs.set(run.runId, run);
    }
    read += rows.length;
    const last = rows.at(-1);
    if (!last || rows.length < 1000) return { runs, truncated: false };
    if (read >= MAX_SPEND_ENTRIES) return { runs, truncated: true };
    after = { createdAt: last.createdAt, runId: last.entry.runId, seq: last.entry.seq };
  }
}

/** Top-level runs with their children's spend added (as an agent's budget counts it). */
export function rollUp(spend: Map<string, RunSpend>): Map<string, RunSpend & { children: string[] }> {
  const roots = new Map<string, RunSpend & { children: string[] }>();
  for (const run of spend.values()) {
    let rootId = run.runId;
    let parent = run.parentRunId;
    for (let depth = 0; parent !== null && depth < 20; depth++) {
      rootId = parent;
      parent = spend.get(parent)?.parentRunId ?? null;
    }
    const base = spend.get(rootId);
    const root = roots.get(rootId) ?? {
      runId: rootId,
      workflow: base?.workflow ?? run.workflow,
      parentRunId: null,
      createdAt: base?.createdAt ?? run.createdAt,
      costMicros: 0,
      children: [],
    };
    root.costMicros += run.costMicros;
    if (rootId !== run.runId) root.children.push(run.runId);
    roots.set(rootId, root);
  }
  return roots;
}
