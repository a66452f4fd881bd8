import type { EntryData, JournalEntry } from "../../core/journal.js";
import { TERMINAL_STATUSES_SQL } from "../../core/run.js";
import { decode } from "../../core/serialize.js";

/**
 * Tables whose rows belong to one run (column `run_id`), deleted with it by `Store.deleteRuns`, children
 * first. A migration that adds another per-run table adds it here too; one that references `runs`
 * with a foreign key makes a forgotten table fail the prune loudly instead of leaving orphans.
 */
export const PER_RUN_TABLES = [
  "journal_text",
  "journal",
  "inbox",
  "human_requests",
  "outbox",
  "run_tags",
  "run_values",
  "run_deadlines",
  "agent_messages",
  "tool_calls",
  "journal_compactions",
] as const;

/** The checkpoint kinds as an SQL list, matching the partial index `journal_checkpoint_idx` (migration 0003). */
export const CHECKPOINT_KINDS_SQL = "('loop.snapshot', 'loop.completed')";

/**
 * SQL condition on `runs AS r`: a terminal run whose parent (if any) is finished or gone, whose
 * children are all finished and whose outbox messages are all delivered or dead. A child is kept
 * while its parent may still read its row; a parent is kept while a child may still wake it; a run
 * is kept while a message of its is still to be delivered. Uses no parameters, so both SQL stores share it.
 */
export const PRUNABLE_SQL = `r.status IN ${TERMINAL_STATUSES_SQL}
  AND NOT EXISTS (SELECT 1 FROM runs p WHERE p.run_id = r.parent_run_id AND p.status NOT IN ${TERMINAL_STATUSES_SQL})
  AND NOT EXISTS (SELECT 1 FROM runs c WHERE c.parent_run_id = r.run_id AND c.status NOT IN ${TERMINAL_STATUSES_SQL})
  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.run_id = r.run_id AND o.status = 'pending')`;

/** The full-text index rows of a journal: `step.completed` entries with search text. */
export function journalTexts(journal: readonly JournalEntry[]): { seq: number; opKey: string; text: string }[] {
  const texts: { seq: number; opKey: string; text: string }[] = [];
  for (const entry of journal) {
    if (entry.kind !== "step.completed") continue;
    const text = decode<EntryData["step.completed"]>(entry.payload)?.text;
    if (typeof text === "string") texts.push({ seq: entry.seq, opKey: entry.opKey ?? "", text });
  }
  return texts;
}
