import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { planCompaction } from "../core/compaction.js";
import type { JournalEntry } from "../core/journal.js";
import { compactOptionsSchema, type CompactOptions, type CompactResult } from "../core/retention-schemas.js";
import type { JournalStore, RetentionStore, Store } from "../core/store.js";
import { archiveFileName, writeAtomically } from "./archive-files.js";
import { check } from "./check-input.js";

/** What compaction needs from the store. */
export type CompactionStore = RetentionStore & Pick<JournalStore, "readJournal"> & Pick<Store, "deleteUnreferencedBlobs">;

/** Entries read per page while planning a run's compaction. */
const PAGE = 1000;

/**
 * Deletes the journal entries that loop checkpoints written before the cutoff supersede (see
 * `engine.compact` and `planCompaction` in core/compaction.ts), run by run, each in its own short
 * transaction. Live runs are compacted too: what a checkpoint supersedes is never read again, and
 * the run's writer appends above it, so no lease is needed. Races are harmless: a second
 * compaction of the same run deletes nothing more and counts nothing twice.
 */
export async function compact(store: CompactionStore, options: CompactOptions, now: number): Promise<CompactResult> {
  const opts = check(compactOptionsSchema, options, "compact");
  const checkpointBefore = opts.checkpointBefore(now);
  const result: CompactResult = { runIds: [], entries: 0, bytes: 0, dryRun: opts.dryRun, archived: [] };
  if (opts.archiveDir && !opts.dryRun) await mkdir(opts.archiveDir, { recursive: true });
  let visited = 0;
  let afterRunId: string | undefined;
  for (;;) {
    const room = opts.limit === undefined ? opts.batchSize : Math.min(opts.batchSize, opts.limit - visited);
    if (room <= 0) break;
    const batch = await store.listCompactableRuns({
      checkpointBefore,
      limit: room,
      ...(afterRunId === undefined ? {} : { afterRunId }),
      ...(opts.runId === undefined ? {} : { runId: opts.runId }),
    });
    if (batch.length === 0) break;
    for (const candidate of batch) {
      visited += 1;
      const journal = await readAll(store, candidate.runId);
      const plan = await planCompaction(journal, checkpointBefore, candidate.checkedSeq, opts.keepSnapshots);
      if (!plan) continue;
      if (opts.dryRun) {
        if (plan.seqs.length === 0) continue;
        result.runIds.push(candidate.runId);
        result.entries += plan.seqs.length;
        result.bytes += plan.bytes;
        continue;
      }
      const file =
        opts.archiveDir && plan.seqs.length > 0 ? await archive(opts.archiveDir, candidate.runId, journal, plan.seqs, plan.checkpointSeq, now) : undefined;
      if (file) result.archived.push(file);
      const outcome = await store.compactJournal(candidate.runId, plan, now);
      if (!outcome || outcome.deleted === 0) continue;
      result.runIds.push(candidate.runId);
      result.entries += outcome.deleted;
      result.bytes += outcome.bytes;
    }
    if (opts.runId !== undefined) break;
    afterRunId = batch.at(-1)!.runId;
    // Let other work (claims, commits) in between two batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Large payloads of the deleted entries that nothing references any more (a blob written in the
  // last hour stays: a commit about to reference it may be in flight).
  if (!opts.dryRun && result.entries > 0) {
    const blobsDeleted = await store.deleteUnreferencedBlobs(now - BLOB_GRACE_MS);
    if (blobsDeleted > 0) result.blobsDeleted = blobsDeleted;
  }
  return result;
}

/** How long a blob stays after its last write even when nothing references it. */
const BLOB_GRACE_MS = 3_600_000;

/** Writes the entries about to be deleted to `<dir>/<runId>.compacted-<checkpointSeq>.json`; returns its path. */
async function archive(
  dir: string,
  runId: string,
  journal: readonly JournalEntry[],
  seqs: readonly number[],
  checkpointSeq: number,
  now: number,
): Promise<string> {
  const doomed = new Set(seqs);
  const file = join(dir, archiveFileName(runId).replace(/\.json$/, `.compacted-${checkpointSeq}.json`));
  const entries = journal.filter((entry) => doomed.has(entry.seq)).map(({ runId: _, ...entry }) => entry);
  const content = { format: "cairn.compacted-entries", version: 1, archivedAt: new Date(now).toISOString(), runId, checkpointSeq, entries };
  await writeAtomically(file, `${JSON.stringify(content, null, 2)}\n`);
  return file;
}

/** A run's whole journal as stored, page by page. */
async function readAll(store: CompactionStore, runId: string): Promise<JournalEntry[]> {
  const entries: JournalEntry[] = [];
  for (let afterSeq = 0; ;) {
    const page = await store.readJournal(runId, { afterSeq, limit: PAGE });
    entries.push(...page);
    if (page.length < PAGE) return entries;
    afterSeq = page.at(-1)!.seq;
  }
}
