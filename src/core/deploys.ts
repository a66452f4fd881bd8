import { z } from "zod";
import { ValidationError } from "./errors.js";
import type { EntryKind, JournalEntry } from "./journal.js";
import type { RunStatus } from "./run.js";

/** How many runs of one workflow version are in one status ({@link Store.countVersions}). */
export interface VersionCount {
  workflow: string;
  version: string;
  status: RunStatus;
  count: number;
}

/** One workflow version as `engine.listVersions` / `cairn versions` show it. */
export interface VersionSummary {
  workflow: string;
  version: string;
  /** Runs of this version by status (statuses with none are left out). */
  counts: Partial<Record<RunStatus, number>>;
  /** Runs not yet finished (pending, running, suspended): a deploy must keep code for these. */
  live: number;
  total: number;
  /** True when drained in the store: no worker claims its runs. */
  drained: boolean;
  /** True when this engine has code for it. */
  registered: boolean;
}

/** A workflow version workers must not claim runs of (`engine.drainVersion`). */
export interface DrainedVersion {
  workflow: string;
  version: string;
  /** When it was drained (epoch ms). */
  drainedAt: number;
}

/** A `name@version` reference, as the CLI takes it (`cairn worker --drain research@1`). */
export const versionRefSchema = z
  .string()
  .regex(/^[^@\s]+@[^@\s]+$/, 'expected "<workflow>@<version>", e.g. "research@1"')
  .transform((ref) => {
    const at = ref.indexOf("@");
    return { workflow: ref.slice(0, at), version: ref.slice(at + 1) };
  });

/**
 * Parses `name@version`.
 * @throws ValidationError naming the bad reference.
 * @example parseVersionRef("research@1") // { workflow: "research", version: "1" }
 */
export function parseVersionRef(ref: string, what = "version"): { workflow: string; version: string } {
  const parsed = versionRefSchema.safeParse(ref);
  if (!parsed.success)
    throw new ValidationError(`${what}: "${ref}" is not a workflow version; ${parsed.error.issues[0]?.message ?? "expected <workflow>@<version>"}.`);
  return parsed.data;
}

/** The `format` tag of a run export file. */
export const JOURNAL_FILE_FORMAT = "cairn.run/1";

const journalEntrySchema = z.object({
  runId: z.string().optional(),
  seq: z.number().int().min(1),
  kind: z.string().min(1),
  opKey: z.string().nullable(),
  payload: z.string(),
  epoch: z.number().int().min(0).default(0),
  at: z.number().default(0),
});

/**
 * A run and its journal as a file (the replay fixtures in `test/fixtures/journals`; `parseJournalFile`
 * also reads a `cairn export` file):
 * `{ format: "cairn.run/1", run: { runId, workflow, version, … }, journal: [entries in seq order] }`.
 * Payloads stay encoded exactly as stored, so a replay reads what a worker would.
 */
export const journalFileSchema = z.object({
  format: z.literal(JOURNAL_FILE_FORMAT),
  run: z
    .object({
      runId: z.string().min(1),
      workflow: z.string().min(1),
      version: z.string().min(1),
      status: z.string().optional(),
      input: z.string(),
    })
    .passthrough(),
  journal: z.array(journalEntrySchema).min(1),
});

/** A parsed run export (see {@link journalFileSchema}). */
export interface JournalFile {
  format: typeof JOURNAL_FILE_FORMAT;
  run: { runId: string; workflow: string; version: string; status?: string; input: string; [extra: string]: unknown };
  journal: JournalEntry[];
}

/**
 * Validates a run export (a parsed JSON file).
 * @throws ValidationError saying what is wrong with it.
 */
export function parseJournalFile(value: unknown, source = "run export"): JournalFile {
  const parsed = journalFileSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new ValidationError(`${source} is not a Cairn run export (${JOURNAL_FILE_FORMAT}): ${issues}.`);
  }
  const { run, journal } = parsed.data;
  const entries = journal.map((e) => ({ ...e, runId: e.runId ?? run.runId, kind: e.kind as EntryKind }));
  // Gaps are allowed after seq 1: a compacted journal lacks the entries its loop checkpoints supersede.
  entries.forEach((entry, i) => {
    if (i === 0 ? entry.seq !== 1 : entry.seq <= entries[i - 1]!.seq) {
      throw new ValidationError(`${source}: journal entry ${i} has seq ${entry.seq}; entries must be in ascending seq order from 1.`);
    }
  });
  return { format: JOURNAL_FILE_FORMAT, run, journal: entries };
}

/** Where a dry replay found the code and the journal disagree. */
export interface ReplayDivergence {
  opKey: string;
  /** What the journal holds there, e.g. `a step (step.started at seq 4)`. */
  expected: string;
  /** What the code does instead, e.g. `issues a sleep with that key`. */
  actual: string;
  /** The full NonDeterminismError message. */
  message: string;
}

/** The outcome of `engine.replay` / `cairn replay`. */
export interface ReplayReport {
  runId: string;
  workflow: string;
  version: string;
  /** True when the code replays the whole journal without diverging. */
  ok: boolean;
  /** Highest seq of the journal the replay covered. */
  replayedSeq: number;
  /** Outcomes (step results, timers, events…) fed to the workflow code. */
  deliveredOutcomes: number;
  /**
   * How the replay stopped: `completed` (the code returned or threw, as it did), `frontier` (the code
   * waits on an op with no journaled outcome: where a worker would go live), or `diverged`.
   */
  stoppedAt: "completed" | "frontier" | "diverged";
  /** The first op the code issued that has no journaled outcome, when stopped at the frontier. */
  frontier?: string;
  divergence?: ReplayDivergence;
}
