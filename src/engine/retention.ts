import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { z } from "zod";
import { RunNotFinishedError, RunNotFoundError, ValidationError } from "../core/errors.js";
import { isTerminal, TERMINAL_STATUSES, type RunRecord, type RunStatus } from "../core/run.js";
import { fromRunExport, parseRunExport, toRunExport, type RunExport } from "../core/run-export.js";
import {
  POLICY_STATUSES,
  pruneOptionsSchema,
  retentionPolicySchema,
  type ExportOptions,
  type ImportOptions,
  type PruneOptions,
  type PruneResult,
  type RetentionPolicy,
} from "../core/retention-schemas.js";
import { runIdRefSchema, runIdSchema } from "../core/schemas.js";
import { serializeError } from "../core/serialize.js";
import type { RetentionStore, Store } from "../core/store.js";
import { archiveFileName, writeAtomically } from "./archive-files.js";
import { compact, type CompactionStore } from "./compaction.js";
import type { EngineLogger } from "./engine.js";

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ValidationError(`${what}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "value"}: ${i.message}`).join("; ")}`);
}

export { archiveFileName } from "./archive-files.js";

/**
 * A run's export file (see `core/run-export.ts`). Refuses a live run unless `force`.
 * @throws RunNotFoundError, RunNotFinishedError
 */
export async function exportRun(store: RetentionStore, runId: string, options: ExportOptions, now: number): Promise<RunExport> {
  check(runIdRefSchema, runId, "exportRun: runId");
  const rows = await store.readRunRows(runId);
  if (!rows) throw new RunNotFoundError(runId);
  if (!isTerminal(rows.run.status) && !options.force) throw new RunNotFinishedError(runId, rows.run.status);
  return toRunExport(rows, now);
}

/**
 * Imports an export file (parsed JSON) into the store, all or nothing, under `options.as` if given.
 * @throws ValidationError for a file that is not a valid export; RunConflictError when the id is taken.
 */
export async function importRun(store: RetentionStore, data: unknown, options: ImportOptions): Promise<RunRecord> {
  if (options.as !== undefined) check(runIdSchema, options.as, "importRun: as");
  const parsed = parseRunExport(data);
  const rows = fromRunExport(parsed, options.as);
  await store.importRun(rows);
  return rows.run;
}

/**
 * Deletes finished runs older than the cutoff, in batches of short transactions (see `engine.prune`).
 * A run selected in a batch is deleted only if it is still terminal with the same journal length at
 * delete time, so a run retried meanwhile survives; its archive file, if written, is removed again.
 */
export async function prune(store: RetentionStore & Pick<Store, "deleteUnreferencedBlobs">, options: PruneOptions, now: number): Promise<PruneResult> {
  const opts = check(pruneOptionsSchema, options, "prune");
  const finishedBefore = opts.finishedBefore(now);
  const statuses: RunStatus[] = opts.statuses ?? [...TERMINAL_STATUSES];
  const base = { finishedBefore, statuses, ...(opts.workflow === undefined ? {} : { workflow: opts.workflow }) };
  if (opts.dryRun) {
    const runs = await store.listPrunableRuns({ ...base, limit: opts.limit ?? 1000 });
    return { runIds: runs.map((run) => run.runId), dryRun: true, archived: [], skipped: 0 };
  }
  if (opts.archiveDir) await mkdir(opts.archiveDir, { recursive: true });
  const result: PruneResult = { runIds: [], dryRun: false, archived: [], skipped: 0 };
  // A batch whose runs all changed since they were listed (retried meanwhile) is no reason to stop,
  // but runs that keep changing under us are: give up after a few such batches in a row.
  let fruitless = 0;
  for (;;) {
    const room = opts.limit === undefined ? opts.batchSize : Math.min(opts.batchSize, opts.limit - result.runIds.length);
    if (room <= 0) break;
    const batch = await store.listPrunableRuns({ ...base, limit: room });
    if (batch.length === 0) break;
    const files = new Map<string, string>();
    const targets: { runId: string; lastSeq: number }[] = [];
    for (const run of batch) {
      if (!opts.archiveDir) {
        targets.push({ runId: run.runId, lastSeq: run.lastSeq });
        continue;
      }
      const rows = await store.readRunRows(run.runId);
      if (!rows || !isTerminal(rows.run.status)) continue;
      const file = join(opts.archiveDir, archiveFileName(run.runId));
      await writeAtomically(file, `${JSON.stringify(toRunExport(rows, now), null, 2)}\n`);
      files.set(run.runId, file);
      targets.push({ runId: run.runId, lastSeq: rows.run.lastSeq });
    }
    const deleted = new Set(await store.deleteRuns(targets));
    for (const run of batch) {
      if (deleted.has(run.runId)) {
        result.runIds.push(run.runId);
        const file = files.get(run.runId);
        if (file) result.archived.push(file);
      } else {
        result.skipped += 1;
        const file = files.get(run.runId);
        if (file) await rm(file, { force: true });
      }
    }
    fruitless = deleted.size === 0 ? fruitless + 1 : 0;
    if (fruitless >= 3) break;
    // Let other work (claims, commits) in between two batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Large payloads of the deleted runs that nothing references any more. A blob written in the last
  // hour is kept: a commit that is about to reference it (deduplicated by hash) may still be in flight.
  if (result.runIds.length > 0) {
    const blobsDeleted = await store.deleteUnreferencedBlobs(now - BLOB_GRACE_MS);
    if (blobsDeleted > 0) result.blobsDeleted = blobsDeleted;
  }
  return result;
}

/** How long a blob stays after its last write even when nothing references it. */
const BLOB_GRACE_MS = 3_600_000;

/**
 * Applies a {@link RetentionPolicy} from a worker: looks every `checkEvery` (real time) whether a pass
 * is due by the engine's clock, and runs one prune per covered status group.
 *
 * Several workers may run it at once without coordination: deletes are conditional (terminal, same
 * journal length, nothing live around), so two passes racing delete each run once and the loser finds
 * nothing to do. The cost for an idle worker is one indexed query per group per interval; a random
 * delay of up to a tenth of the interval spreads the workers' passes.
 */
export class RetentionScheduler {
  private readonly policy: ReturnType<typeof parsePolicy>;
  private readonly timer: NodeJS.Timeout;
  private nextAt: number;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly store: CompactionStore,
    policy: RetentionPolicy,
    private readonly clock: () => number,
    private readonly logger: EngineLogger,
  ) {
    this.policy = parsePolicy(policy);
    this.nextAt = clock();
    this.timer = setInterval(() => this.tick(), Math.max(1, this.policy.checkEvery));
    this.timer.unref();
    this.tick();
  }

  /** Stops looking; waits for a pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.stopped || this.running || this.clock() < this.nextAt) return;
    const now = this.clock();
    this.nextAt = now + this.policy.interval + Math.floor(Math.random() * this.policy.interval * 0.1);
    this.running = this.pass(now).finally(() => (this.running = null));
  }

  private async pass(now: number): Promise<void> {
    if (this.policy.compactLoopsAfter !== undefined && !this.stopped) {
      try {
        const done = await compact(
          this.store,
          {
            checkpointBefore: new Date(now - this.policy.compactLoopsAfter),
            batchSize: this.policy.batchSize,
            ...(this.policy.archiveDir ? { archiveDir: this.policy.archiveDir } : {}),
            ...(this.policy.keepSnapshots === undefined ? {} : { keepSnapshots: this.policy.keepSnapshots }),
          },
          now,
        );
        if (done.entries > 0) this.logger.log("info", "retention compacted loops", { runs: done.runIds.length, entries: done.entries, bytes: done.bytes });
      } catch (error) {
        this.logger.log("warn", "retention compaction failed; it runs again at the next interval", { error: serializeError(error) });
      }
    }
    for (const [key, statuses] of Object.entries(POLICY_STATUSES) as [keyof typeof POLICY_STATUSES, readonly RunStatus[]][]) {
      const after = this.policy[key];
      if (after === undefined || this.stopped) continue;
      try {
        const done = await prune(
          this.store,
          {
            finishedBefore: new Date(now - after),
            statuses: [...statuses],
            batchSize: this.policy.batchSize,
            ...(this.policy.archiveDir ? { archiveDir: this.policy.archiveDir } : {}),
          },
          now,
        );
        if (done.runIds.length > 0) this.logger.log("info", "retention pruned runs", { statuses, count: done.runIds.length, archived: done.archived.length });
      } catch (error) {
        this.logger.log("warn", "retention pass failed; it runs again at the next interval", { statuses, error: serializeError(error) });
      }
    }
  }
}

/** Validates a {@link RetentionPolicy}; durations become ms. @throws ValidationError */
export function parsePolicy(policy: RetentionPolicy): z.output<typeof retentionPolicySchema> {
  return check(retentionPolicySchema, policy, "createEngine: retention");
}
