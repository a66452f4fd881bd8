import type { EntryKind } from "../core/journal.js";
import { parseRunExport, RUN_EXPORT_FORMAT } from "../core/run-export.js";
import {
  JOURNAL_FILE_FORMAT,
  parseJournalFile,
  type DrainedVersion,
  type ReplayReport,
  type JournalFile,
  type VersionCount,
  type VersionSummary,
} from "../core/deploys.js";
import { RunNotFoundError, WorkflowNotRegisteredError } from "../core/errors.js";
import { TERMINAL_STATUSES } from "../core/run.js";
import type { Store } from "../core/store.js";
import { dryReplay } from "./dry-replay.js";
import type { Workflow } from "./workflow.js";

/**
 * Folds the store's per-status counts into one line per version, adding drained versions that have no
 * runs and versions this engine registers, in (workflow, version) order.
 */
export function summarizeVersions(counts: readonly VersionCount[], drained: readonly DrainedVersion[], registered: Iterable<string>): VersionSummary[] {
  const byKey = new Map<string, VersionSummary>();
  const registeredKeys = new Set(registered);
  const drainedKeys = new Set(drained.map((d) => `${d.workflow}@${d.version}`));
  const get = (workflow: string, version: string) => {
    const key = `${workflow}@${version}`;
    let summary = byKey.get(key);
    if (!summary) {
      summary = { workflow, version, counts: {}, live: 0, total: 0, drained: drainedKeys.has(key), registered: registeredKeys.has(key) };
      byKey.set(key, summary);
    }
    return summary;
  };
  for (const count of counts) {
    const summary = get(count.workflow, count.version);
    summary.counts[count.status] = (summary.counts[count.status] ?? 0) + count.count;
    summary.total += count.count;
    if (!TERMINAL_STATUSES.includes(count.status)) summary.live += count.count;
  }
  for (const d of drained) get(d.workflow, d.version);
  for (const key of registeredKeys) {
    const at = key.lastIndexOf("@");
    get(key.slice(0, at), key.slice(at + 1));
  }
  return [...byKey.values()].sort((a, b) =>
    a.workflow < b.workflow ? -1 : a.workflow > b.workflow ? 1 : a.version < b.version ? -1 : a.version > b.version ? 1 : 0,
  );
}

/**
 * A journal file for a replay: the fixture format (`cairn.run/1`) or a `cairn export` file, whose run
 * row and journal are all a replay needs.
 * @throws ValidationError naming what is wrong with it.
 */
export function readJournalFile(value: unknown, source = "run export"): JournalFile {
  if (typeof value === "object" && value !== null && (value as { format?: unknown }).format === RUN_EXPORT_FORMAT) {
    const exported = parseRunExport(value);
    const { runId, workflow, version, status, input } = exported.run;
    return {
      format: JOURNAL_FILE_FORMAT,
      run: { runId, workflow, version, status, input },
      journal: exported.journal.map((entry) => ({ ...entry, runId, kind: entry.kind as EntryKind })),
    };
  }
  return parseJournalFile(value, source);
}

/**
 * What `engine.replay` replays: a run export (or its parsed JSON) or a runId read from the store.
 * Picks the registered code for the run's exact workflow version.
 */
export async function replayRun(source: JournalFile | unknown, store: Store, workflows: Map<string, Workflow<any, any>>): Promise<ReplayReport> {
  let exported: JournalFile;
  if (typeof source === "string") {
    const run = await store.getRun(source);
    if (!run) throw new RunNotFoundError(source);
    exported = { format: "cairn.run/1", run: { ...run }, journal: await store.readJournal(run.runId) };
  } else {
    exported = readJournalFile(source);
  }
  const { run, journal } = exported;
  const workflow = workflows.get(`${run.workflow}@${run.version}`);
  if (!workflow) throw new WorkflowNotRegisteredError(`${run.workflow}@${run.version}`, [...workflows.keys()]);
  return dryReplay(workflow, run, journal);
}
