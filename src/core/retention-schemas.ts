import { z } from "zod";
import { durationSchema, type Duration } from "./duration.js";
import { FAILED_STATUSES, RUN_STATUSES, TERMINAL_STATUSES, type RunStatus } from "./run.js";

const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A cutoff: a duration before now (`"30d"`, `"12h"`, or ms as a number) or an absolute time (a Date,
 * or an ISO date such as `"2026-01-31"` / `"2026-01-31T12:00:00Z"`). Parses to a function of now.
 */
export const cutoffSchema = z
  .union([
    z.date().transform((date) => () => date.getTime()),
    z
      .string()
      .regex(ISO_DATE)
      .transform((text, issue) => {
        const at = Date.parse(text);
        if (Number.isNaN(at)) {
          issue.addIssue({ code: "custom", message: `"${text}" is not a valid date` });
          return z.NEVER;
        }
        return () => at;
      }),
    durationSchema.transform((ms) => (now: number) => now - ms),
  ])
  .describe('a duration such as "30d" or an ISO date such as "2026-01-31"');

/** A run status that prune may delete: one of the terminal statuses. */
export const terminalStatusSchema = z.enum(RUN_STATUSES as [RunStatus, ...RunStatus[]]).refine((status) => TERMINAL_STATUSES.includes(status), {
  message: `only terminal statuses can be pruned (${TERMINAL_STATUSES.join(", ")})`,
});

/** Options of `engine.prune` (and `cairn prune`). */
export const pruneOptionsSchema = z
  .object({
    finishedBefore: cutoffSchema,
    statuses: z.array(terminalStatusSchema).min(1).optional(),
    workflow: z.string().min(1).max(200).optional(),
    limit: z.number().int().min(1).optional(),
    batchSize: z.number().int().min(1).max(10_000).default(100),
    dryRun: z.boolean().default(false),
    archiveDir: z.string().min(1).optional(),
    keepSnapshots: z.number().int().min(1).max(10_000).default(1),
  })
  .strict();

/** What `engine.prune` accepts. */
export interface PruneOptions {
  /** Prune runs that finished before this: a duration before now (`"30d"`) or an absolute time (Date, `"2026-01-31"`). */
  finishedBefore: Duration | Date | string;
  /** Which terminal statuses to prune. Default: all of them (completed, failed, cancelled, compensated, compensation_failed, dead). */
  statuses?: RunStatus[];
  /** Only runs of this workflow (name). */
  workflow?: string;
  /** At most this many runs in all (for a dry run, at most this many are listed; default 1000 then). Default: no limit. */
  limit?: number;
  /** Runs deleted per transaction. Default 100. Each batch is its own short transaction, so a huge prune never holds a long lock. */
  batchSize?: number;
  /** Only list what would go; change nothing. */
  dryRun?: boolean;
  /** Write each run as an export file (`<dir>/<runId>.json`, importable with `cairn import`) before deleting it. */
  archiveDir?: string;
}

/** What `engine.prune` did. */
export interface PruneResult {
  /** The runs deleted (or, for a dry run, that would be deleted), oldest finished first. */
  runIds: string[];
  dryRun: boolean;
  /** The archive files written for the deleted runs. */
  archived: string[];
  /** Runs selected but kept because they changed before the delete (e.g. retried). */
  skipped: number;
  /** Large-payload blobs deleted with the runs (nothing references them any more); absent when none. */
  blobsDeleted?: number;
}

/** Options of `engine.compact` (and `cairn prune --compact-loops`). */
export const compactOptionsSchema = z
  .object({
    checkpointBefore: cutoffSchema,
    runId: z.string().min(1).max(256).optional(),
    limit: z.number().int().min(1).optional(),
    batchSize: z.number().int().min(1).max(10_000).default(100),
    dryRun: z.boolean().default(false),
    archiveDir: z.string().min(1).optional(),
    keepSnapshots: z.number().int().min(1).max(10_000).default(1),
  })
  .strict();

/**
 * What `engine.compact` accepts.
 * @example
 * // Delete the loop entries that snapshots written more than an hour ago supersede, in every run:
 * const { runs, entries, bytes } = await engine.compact({ checkpointBefore: "1h" });
 */
export interface CompactOptions {
  /**
   * Compact what loop checkpoints (snapshots, completions) written before this supersede: a duration
   * before now (`"1h"`, `0` for every checkpoint) or an absolute time (Date, `"2026-01-31"`).
   */
  checkpointBefore: Duration | Date | string;
  /** Only this run. */
  runId?: string;
  /** At most this many runs in all. Default: no limit. */
  limit?: number;
  /** Runs listed per query (each run is compacted in its own short transaction). Default 100. */
  batchSize?: number;
  /** Only count what would go; change nothing. */
  dryRun?: boolean;
  /**
   * Leave this many of each run's newest loop checkpoints (snapshots or completions, of any loop)
   * and what lies between them, so a fork can still cut there. Default 1: only the newest.
   */
  keepSnapshots?: number;
  /**
   * Write the entries of each run before deleting them to `<dir>/<runId>.compacted-<checkpointSeq>.json`
   * (format `cairn.compacted-entries`, for audit and debugging: they cannot be put back into the run).
   */
  archiveDir?: string;
}

/** What `engine.compact` did (or, for a dry run, would do). */
export interface CompactResult {
  /** Runs whose journal lost entries. */
  runIds: string[];
  /** Journal entries deleted. */
  entries: number;
  /** Bytes of their stored payloads. */
  bytes: number;
  dryRun: boolean;
  /** Large-payload blobs deleted with the entries (nothing references them any more); absent when none. */
  blobsDeleted?: number;
  /** The archive files written (with `archiveDir`). */
  archived: string[];
}

/** `createEngine({ retention })`: the automatic policy. */
export const retentionPolicySchema = z
  .object({
    completedAfter: durationSchema.optional(),
    failedAfter: durationSchema.optional(),
    cancelledAfter: durationSchema.optional(),
    interval: durationSchema.default(3_600_000),
    checkEvery: durationSchema.default(60_000),
    batchSize: z.number().int().min(1).max(10_000).default(100),
    archiveDir: z.string().min(1).optional(),
    compactLoopsAfter: durationSchema.optional(),
    keepSnapshots: z.number().int().min(1).max(10_000).optional(),
  })
  .strict()
  .refine((p) => p.completedAfter !== undefined || p.failedAfter !== undefined || p.cancelledAfter !== undefined || p.compactLoopsAfter !== undefined, {
    message: "give at least one of completedAfter, failedAfter, cancelledAfter, compactLoopsAfter",
  });

/**
 * The automatic retention policy of `createEngine({ retention })`, applied by every worker of the engine.
 * Each `…After` keeps runs of those statuses for that long after they finished; a group left out is never
 * pruned automatically.
 * @example
 * createEngine({ store, workflows, retention: { completedAfter: "30d", failedAfter: "90d", interval: "1h" } });
 */
export interface RetentionPolicy {
  /** `completed` and `compensated` runs. */
  completedAfter?: Duration;
  /** `failed`, `compensation_failed` and `dead` runs. */
  failedAfter?: Duration;
  /** `cancelled` runs. */
  cancelledAfter?: Duration;
  /** Time between two passes, by the engine's clock. Default `"1h"`. */
  interval?: Duration;
  /** How often (real time) a worker looks whether a pass is due. Default `"1m"`. */
  checkEvery?: Duration;
  /** Runs deleted per transaction. Default 100. */
  batchSize?: number;
  /** Archive each run before deleting it, as `cairn prune --archive` does (and compacted entries, as `cairn compact --archive`). */
  archiveDir?: string;
  /**
   * Compact loops: once a loop checkpoint (snapshot or completion) is this old, delete the journal
   * entries it supersedes, in live and finished runs, as `engine.compact({ checkpointBefore })` does.
   * Resume, replay, export and fork keep working (see docs/operations/retention.md). Default: never.
   */
  compactLoopsAfter?: Duration;
  /** With `compactLoopsAfter`: how many of each run's newest loop checkpoints stay with what lies between them (default 1). */
  keepSnapshots?: number;
}

/** The statuses each duration of a {@link RetentionPolicy} covers. */
export const POLICY_STATUSES = {
  completedAfter: ["completed", "compensated"],
  failedAfter: FAILED_STATUSES,
  cancelledAfter: ["cancelled"],
} as const satisfies Record<string, readonly RunStatus[]>;

/** Options of `engine.exportRun`. */
export interface ExportOptions {
  /** Export a live run as it is now (default: refuse with RunNotFinishedError). */
  force?: boolean;
}

/** Options of `engine.importRun`. */
export interface ImportOptions {
  /** Import under this run id instead of the exported one. */
  as?: string;
}
